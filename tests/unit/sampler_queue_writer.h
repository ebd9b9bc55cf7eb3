// Drives tests/sampler/queue_writer, a process with amd_queue_t-shaped
// blocks whose indexes move on command: what the sampler tests and
// bench/sampler_bench.cc read with process_vm_readv.
#pragma once

#include <signal.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace gpuq {

/// One queue_writer child. Thread-safety: none (one test thread).
class QueueWriterProcess {
 public:
  /// Starts `path` (GPUQ_QUEUE_WRITER). ok() is false if it could not.
  explicit QueueWriterProcess(const std::string& path) {
    // A child that died must fail a test, not kill it with SIGPIPE.
    signal(SIGPIPE, SIG_IGN);
    int in[2], out[2];
    if (pipe(in) != 0) return;
    if (pipe(out) != 0) {
      close(in[0]);
      close(in[1]);
      return;
    }
    pid_ = fork();
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      close(in[0]);
      close(in[1]);
      close(out[0]);
      close(out[1]);
      execl(path.c_str(), path.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    to_ = fdopen(in[1], "w");
    from_ = fdopen(out[0], "r");
  }
  ~QueueWriterProcess() {
    if (to_ != nullptr) fclose(to_);
    if (from_ != nullptr) fclose(from_);
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  QueueWriterProcess(const QueueWriterProcess&) = delete;
  QueueWriterProcess& operator=(const QueueWriterProcess&) = delete;

  bool ok() const { return pid_ > 0 && to_ != nullptr && from_ != nullptr; }
  uint32_t pid() const { return static_cast<uint32_t>(pid_); }

  /// Sends one command line and returns the reply line ("" on EOF).
  std::string Command(const std::string& command) {
    fprintf(to_, "%s\n", command.c_str());
    fflush(to_);
    std::string reply;
    int c;
    while ((c = fgetc(from_)) != EOF && c != '\n') reply.push_back(char(c));
    return reply;
  }

  /// Adds n queues with write index w and read index r; returns the
  /// addresses of their amd_queue_t blocks (empty on error).
  std::vector<uint64_t> NewQueues(size_t n, uint64_t w = 0, uint64_t r = 0) {
    std::istringstream reply(Command("new " + std::to_string(n) + " " +
                                     std::to_string(w) + " " +
                                     std::to_string(r)));
    std::string word;
    size_t first = 0, count = 0;
    reply >> word >> first >> count;
    std::vector<uint64_t> addrs;
    if (word != "queues") return addrs;
    for (size_t i = 0; i < count; ++i) {
      reply >> word;
      addrs.push_back(std::strtoull(word.c_str(), nullptr, 16));
    }
    return addrs;
  }

  /// Queue i: write += dw, read += dr. Returns the reply ("ok W R").
  std::string Advance(size_t i, uint64_t dw, uint64_t dr) {
    return Command("adv " + std::to_string(i) + " " + std::to_string(dw) + " " +
                   std::to_string(dr));
  }
  std::string AdvanceAll(uint64_t dw, uint64_t dr) {
    return Command("advall " + std::to_string(dw) + " " + std::to_string(dr));
  }

  /// The amd_queue_t address of a queue with indexes w and r in a page the
  /// child made PROT_NONE (queue_writer.c, "fenced"); 0 on error.
  uint64_t Fenced(uint64_t w, uint64_t r) {
    const std::string reply =
        Command("fenced " + std::to_string(w) + " " + std::to_string(r));
    if (reply.rfind("fenced ", 0) != 0) return 0;
    return std::strtoull(reply.c_str() + 7, nullptr, 16);
  }

  /// An address in the child that is not mapped.
  uint64_t Hole() {
    const std::string reply = Command("hole");
    if (reply.rfind("hole ", 0) != 0) return 0;
    return std::strtoull(reply.c_str() + 5, nullptr, 16);
  }

  /// Tells the child to exit; with `reap`, waits for it (then its pid is
  /// gone), else it stays a zombie until destruction.
  void Exit(bool reap) {
    fprintf(to_, "exit\n");
    fflush(to_);
    if (!reap) {
      // Wait until it has exited, without reaping it.
      siginfo_t info{};
      waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOWAIT);
      return;
    }
    waitpid(pid_, nullptr, 0);
    reaped_ = true;
  }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  FILE* to_ = nullptr;
  FILE* from_ = nullptr;
};

/// amd_queue_t field offsets (kfd-probe-points.md section 3).
inline constexpr uint64_t kWriteDispatchIdOffset = 56;
inline constexpr uint64_t kReadDispatchIdOffset = 128;

}  // namespace gpuq
