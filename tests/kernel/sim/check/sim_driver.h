// One kfd_sim_driver process (tests/kernel/sim/kfd_sim_driver.c) in a
// cgroup, driven command by command from a scenario; and the runtime
// clients that speak its commands.
#ifndef GPUQ_SIM_CHECK_SIM_DRIVER_H
#define GPUQ_SIM_CHECK_SIM_DRIVER_H

#include <string>
#include <sys/types.h>

namespace sim_check
{

// What every driver wrote (for drivers-behaved), and the commands that
// could not reach one.
constexpr const char *kDriversOut = "/tmp/drivers.out";
constexpr const char *kDriverErrors = "/tmp/drv-errors.txt";

class SimDriver
{
      public:
	// kfd_sim_driver in CGROUP, its output in /tmp/NAME.out, its commands
	// through a pipe; waits up to 10 s for its READY.
	SimDriver(const std::string &name, const std::string &cgroup);
	// A runtime client that speaks the drivers' commands (rocr_client,
	// hip_client serve, rocblas_client serve: "sync N" answered "SYNC N"),
	// started as PID with its output in /tmp/NAME.out and its commands
	// through COMMANDS (the write end of its stdin, which this takes).
	SimDriver(const std::string &name, pid_t pid, int commands);
	// Exits it (Exit) unless it was told to.
	~SimDriver();
	SimDriver(const SimDriver &) = delete;
	SimDriver &operator=(const SimDriver &) = delete;

	// COMMAND, then waits (up to 120 s) until the driver did it. A driver
	// that has exited, or never started, is said at once in
	// kDriverErrors (which the failing check dumps) instead.
	bool Do(const std::string &command);
	// COMMAND alone, without waiting: many at once, then Do's sync waits
	// for them all.
	void Send(const std::string &command);
	// Exits with its queues alive (LAST, a command, in the same write: the
	// driver reads both at once) and returns once KFD tore the process down
	// (its worker removes proc/<pid> last), up to 60 s; its output goes to
	// the log and kDriversOut.
	void Exit(const std::string &last = "");
	// Exit in two halves, for drivers that exit at once: the command
	// (LAST, then exit), and the wait for the teardown.
	void Leave(const std::string &last = "");
	void AwaitGone();

	pid_t Pid() const
	{
		return pid_;
	}
	// /tmp/NAME.out
	const std::string &Output() const
	{
		return output_;
	}

      private:
	bool Said(const std::string &line) const;

	std::string name_;
	std::string output_;
	pid_t pid_ = -1;
	int commands_ = -1;    // the pipe's write end
	bool leaving_ = false; // told to exit, not yet awaited
	std::string prefix_;   // before each of its lines ("DRV <pid> ")
};

} // namespace sim_check

#endif
