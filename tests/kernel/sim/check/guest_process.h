// The guest's processes, started and waited for from compiled code (as a
// shell's `&`, `kill -0`, `wait`, `timeout` and redirections), for the
// scenarios sim_check runs itself.
// Every child is this process's own, so its exit is reaped and kept here.
#ifndef GPUQ_SIM_CHECK_GUEST_PROCESS_H
#define GPUQ_SIM_CHECK_GUEST_PROCESS_H

#include <string>
#include <sys/types.h>
#include <vector>

namespace sim_check
{

struct SpawnOptions {
	std::string cgroup;  // the cgroup v2 directory it starts in ("": ours)
	std::string output;  // its stdout, and stderr unless errors is set ("": ours)
	std::string errors;  // its stderr alone
	bool append = false; // output appended to, not truncated
	int input = -1;	     // its stdin (-1: /dev/null)
};

// ARGV[0] (a path, or a name looked up in PATH) with ARGV, as OPTIONS say; its pid, or -1 (the
// reason on stderr) when it could not be started.
pid_t Spawn(const std::vector<std::string> &argv, const SpawnOptions &options);

// PID, a child, has not exited (`kill -0`); its exit is reaped and kept when
// it has.
bool Running(pid_t pid);

// PID's exit as the shell's `wait` gives it (its code, or 128 + the signal
// that ended it), waiting for it; -1 when PID is no child of ours.
int Reap(pid_t pid);

// True once PID has exited, waiting up to SECONDS.
bool WaitExit(pid_t pid, double seconds);

// Stops PID, a recorder, as Ctrl-C does: SIGINT, then SIGKILL after 60 s.
// Its exit status (Reap).
int Interrupt(pid_t pid);

// ARGV with its stdout in OUTPUT (and stderr, unless ERRORS names a file),
// killed after SECONDS: its exit status, 124 when it was killed (as
// `timeout`), 127 when it could not be started.
int RunFor(const std::vector<std::string> &argv, const std::string &output,
	   const std::string &errors, double seconds);

// Seconds since boot, /proc/uptime's clock.
double Uptime();
// "GPUQ-KTIME <kernel> STEP <uptime>": when the guest reached STEP.
void Ktime(const std::string &step);
// Sleeps SECONDS.
void Nap(double seconds);

// Writes TEXT to PATH (a sysfs parameter, a file the guest reads later);
// false when it cannot.
bool WriteText(const std::string &path, const std::string &text);
// The names in DIR, as a shell's * matches them (no dot files); none when
// DIR is not a directory.
std::vector<std::string> Entries(const std::string &dir);
// PATH exists (any kind of file).
bool Exists(const std::string &path);
// PATH's bytes ("" when unreadable).
std::string ReadText(const std::string &path);
// PATH's first line, without its newline ("" when unreadable).
std::string FirstLine(const std::string &path);
// Stops PID, a daemon, as systemd does: SIGTERM, then SIGKILL after 10 s.
// "exit N" (its status, as Reap gives it), or "hung" when it was killed.
std::string Terminate(pid_t pid);
// Appends TEXT to PATH.
void AppendText(const std::string &path, const std::string &text);
// Appends FROM's bytes to TO.
void AppendFile(const std::string &from, const std::string &to);

// Where each thread of PID waits (state, syscall, wchan, kernel stack): a
// hung process's lines for the log.
std::string Threads(pid_t pid);

} // namespace sim_check

#endif
