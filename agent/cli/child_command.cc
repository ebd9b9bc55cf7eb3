#include "cli/child_command.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>

extern char** environ;

namespace gpuq {

pid_t SpawnCommand(const std::vector<std::string>& argv, int* error_number) {
  if (argv.empty()) {
    *error_number = ENOENT;
    return -1;
  }
  std::vector<char*> args;
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The agent's SIGINT/SIGTERM handlers are reset by exec anyway; the
  // command also starts with an empty signal mask, whatever thread spawns.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  // glibc's posix_spawnp reports a failed exec as its return value.
  const int rc =
      posix_spawnp(&pid, args[0], nullptr, &attr, args.data(), environ);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    *error_number = rc;
    return -1;
  }
  return pid;
}

int SpawnFailureStatus(int error_number) {
  return error_number == ENOENT || error_number == ENOTDIR ? 127 : 126;
}

int ShellExitStatus(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

}  // namespace gpuq
