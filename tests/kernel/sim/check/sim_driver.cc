#include "sim_driver.h"

#include "guest_process.h"
#include "lines.h"
#include "verdict.h"

#include <fcntl.h>
#include <fstream>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sim_check
{
namespace
{

// The sync tokens, one sequence for every driver (as the shell's SEQ).
int sequence = 0;

void DriverError(const std::string &line)
{
	std::ofstream(kDriverErrors, std::ios::app) << line << "\n";
	std::printf("%s\n", line.c_str());
	std::fflush(stdout);
}

} // namespace

SimDriver::SimDriver(const std::string &name, const std::string &cgroup)
    : name_(name), output_("/tmp/" + name + ".out")
{
	unlink(output_.c_str());
	int ends[2];
	if (pipe2(ends, O_CLOEXEC) != 0)
		return;
	SpawnOptions options;
	options.cgroup = cgroup;
	options.output = output_;
	options.input = ends[0];
	pid_ = Spawn({ "/bin/kfd_sim_driver" }, options);
	close(ends[0]);
	commands_ = ends[1];
	prefix_ = "DRV " + std::to_string(pid_) + " ";
	const double t0 = Uptime();
	while (!Said("READY") && Running(pid_) && Uptime() - t0 < 10)
		Nap(0.05);
}

SimDriver::SimDriver(const std::string &name, pid_t pid, int commands)
    : name_(name), output_("/tmp/" + name + ".out"), pid_(pid), commands_(commands)
{
}

SimDriver::~SimDriver()
{
	Exit();
}

bool SimDriver::Said(const std::string &line) const
{
	std::vector<std::string> lines;
	ReadLines(output_, lines);
	const std::string want = prefix_ + line;
	for (const std::string &said : lines)
		if (said == want)
			return true;
	return false;
}

bool SimDriver::Do(const std::string &command)
{
	if (commands_ < 0 || !Running(pid_)) {
		DriverError("DRIVER " + name_ + " is not running (pid " + std::to_string(pid_) +
			    "): '" + command + "' not sent");
		return false;
	}
	const std::string token = std::to_string(++sequence);
	const std::string text = command + "\nsync " + token + "\n";
	if (write(commands_, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
		DriverError("DRIVER " + name_ + " did not take '" + command + "'");
		return false;
	}
	const double t0 = Uptime();
	while (!Said("SYNC " + token) && Uptime() - t0 < 120) {
		if (!Running(pid_)) {
			DriverError("DRIVER " + name_ + " exited during '" + command + "'");
			return false;
		}
		Nap(0.05);
	}
	return true;
}

void SimDriver::Send(const std::string &command)
{
	const std::string text = command + "\n";
	if (commands_ < 0 ||
	    write(commands_, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
		DriverError("DRIVER " + name_ + " did not take '" + command + "'");
}

void SimDriver::Exit(const std::string &last)
{
	Leave(last);
	AwaitGone();
}

void SimDriver::Leave(const std::string &last)
{
	if (commands_ < 0)
		return;
	const std::string text = (last.empty() ? "" : last + "\n") + "exit\n";
	if (write(commands_, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
		DriverError("DRIVER " + name_ + " did not take 'exit'");
	close(commands_);
	commands_ = -1;
	leaving_ = true;
}

void SimDriver::AwaitGone()
{
	if (!leaving_)
		return;
	leaving_ = false;
	const std::string kfd_proc = "/sys/class/kfd/kfd/proc/" + std::to_string(pid_);
	const double t0 = Uptime();
	while ((Running(pid_) || Exists(kfd_proc)) && Uptime() - t0 < 60)
		Nap(0.05);
	Dump("driver-" + name_, output_);
	AppendFile(output_, kDriversOut);
}

} // namespace sim_check
