#include "guest_agent.h"

#include "guest_process.h"
#include "lines.h"
#include "scrape.h"
#include "verdict.h"

#include <csignal>
#include <cstdio>

namespace sim_check
{
namespace
{

constexpr const char *kTruth = "/sys/kernel/debug/kfd_sim/truth";

// The probes the exposition LINES say are attached.
int AttachedLines(const std::vector<std::string> &lines)
{
	int attached = 0;
	for (const std::string &line : StartingWith(lines, "gpuq_probe_attached{"))
		attached += EndsWith(line, "} 1");
	return attached;
}

} // namespace

void GuestAgent::Start(const std::string &mode, const std::vector<std::string> &flags)
{
	WriteText("/tmp/base.truth", ReadText(kTruth));
	Launch(mode, flags);
	Await();
}

void GuestAgent::Launch(const std::string &mode, const std::vector<std::string> &flags)
{
	std::vector<std::string> argv = { "/bin/gpuq-agent", "--web.listen-address",
					  "127.0.0.1:" + std::to_string(port_),
					  "--reconcile-interval", "2s" };
	if (!runtime_lookup_)
		argv.push_back("--no-runtime-lookup");
	argv.insert(argv.end(), flags.begin(), flags.end());
	SpawnOptions options;
	options.output = "/tmp/agent-" + mode + ".out";
	options.append = true;
	pid_ = Spawn(argv, options);
	launched_ = Uptime();
}

bool GuestAgent::Scrape() const
{
	return sim_check::Scrape(port_, kMetrics);
}

void GuestAgent::Await(double limit)
{
	up_.clear();
	while (Uptime() - launched_ < limit) {
		std::vector<std::string> lines;
		if (Scrape() && ReadLines(kMetrics, lines) && AttachedLines(lines) >= attach_min_) {
			char seconds[32];
			std::snprintf(seconds, sizeof(seconds), "%.1f", Uptime() - launched_);
			up_ = seconds;
			return;
		}
		if (!Running(pid_))
			return;
		Nap(0.2);
	}
}

std::string GuestAgent::Stop()
{
	if (pid_ <= 0)
		return "exit -1";
	kill(pid_, SIGTERM);
	if (WaitExit(pid_, 10))
		return "exit " + std::to_string(Reap(pid_));
	WriteText("/tmp/hung.txt", Threads(pid_));
	Dump("hung-agent", "/tmp/hung.txt");
	Kill();
	return "hung";
}

void GuestAgent::Kill()
{
	if (pid_ <= 0)
		return;
	kill(pid_, SIGKILL);
	Reap(pid_);
}

} // namespace sim_check
