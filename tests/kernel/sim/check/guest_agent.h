// The agent's daemon in the guest, started, awaited and stopped from a
// scenario.
#ifndef GPUQ_SIM_CHECK_GUEST_AGENT_H
#define GPUQ_SIM_CHECK_GUEST_AGENT_H

#include <string>
#include <sys/types.h>
#include <vector>

namespace sim_check
{

// The exposition every scenario reads and compares (the guest's /tmp/m.prom).
constexpr const char *kMetrics = "/tmp/m.prom";

class GuestAgent
{
      public:
	// PORT: where it serves; ATTACH_MIN: the probes attached before it
	// counts as up (every lifecycle probe; the tracepoint tier has two).
	// Without RUNTIME_LOOKUP it names containers by their short ids.
	GuestAgent(int port, int attach_min, bool runtime_lookup = false)
	    : port_(port), attach_min_(attach_min), runtime_lookup_(runtime_lookup)
	{
	}

	// The daemon (MODE names its log, /tmp/agent-MODE.out) with FLAGS
	// after the guest's own; the simulator's truth now becomes
	// /tmp/base.truth, what it starts from. Then Await.
	void Start(const std::string &mode, const std::vector<std::string> &flags);
	// The daemon started as Start does, without the base truth or the
	// wait: several load their programs at once, then each is awaited.
	void Launch(const std::string &mode, const std::vector<std::string> &flags);
	// Scrapes kMetrics until ATTACH_MIN probes are attached (Up() is then
	// the seconds since it was launched, "%.1f") or LIMIT seconds since
	// then pass or it died (Up() "").
	void Await(double limit = 180);
	// SIGTERM, then SIGKILL after 10 s: "exit N" (its status), or "hung"
	// (where its threads waited goes to the log).
	std::string Stop();
	// SIGKILL, as a crash.
	void Kill();
	bool Scrape() const;

	pid_t Pid() const
	{
		return pid_;
	}
	const std::string &Up() const
	{
		return up_;
	}

      private:
	int port_;
	int attach_min_;
	bool runtime_lookup_;
	pid_t pid_ = -1;
	double launched_ = 0; // Uptime()
	std::string up_;
};

} // namespace sim_check

#endif
