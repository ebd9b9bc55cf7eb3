#include "least_privilege_agents.h"

#include "command.h"
#include "guest_process.h"
#include "lines.h"
#include "scrape.h"
#include "truth_checks.h"
#include "verdict.h"

#include <csignal>
#include <cstdlib>

namespace sim_check
{
namespace
{

constexpr int kLeastPrivPort = 9481;
constexpr int kNoPtracePort = 9482;
constexpr const char *kScrape = "/tmp/lp.prom";

pid_t Launch(const std::string &name, int port, const std::string &caps)
{
	SpawnOptions options;
	options.output = "/tmp/agent-" + name + ".out";
	return Spawn({ "/bin/capbound", caps, "/bin/gpuq-agent", "--web.listen-address",
		       "127.0.0.1:" + std::to_string(port), "--no-runtime-lookup",
		       "--probe-tier=tracepoint", "--sample-interval", "100ms" },
		     options);
}

// Its KFD hooks attached, not any two (the cgroup tracepoints attach even
// where the planner found no tracepoint tier).
void AwaitHooks(pid_t pid, int port, const std::vector<std::string> &tp_probes)
{
	const double t0 = Uptime();
	while (Uptime() - t0 < 180) {
		std::vector<std::string> lines;
		if (Scrape(port, kScrape) && ReadLines(kScrape, lines)) {
			bool all = true;
			for (const std::string &probe : tp_probes) {
				bool attached = false;
				for (const std::string &line : StartingWith(
					 lines, "gpuq_probe_attached{probe=\"" + probe + "\","))
					attached |= line.find("tier=\"tracepoint\"} 1") !=
						    std::string::npos;
				all &= attached;
			}
			if (all)
				return;
		}
		if (!Running(pid))
			return;
		Nap(0.3);
	}
}

} // namespace

LeastPrivilegeAgents::LeastPrivilegeAgents(const std::vector<std::string> &tp_probes)
{
	leastpriv_ = Launch("leastpriv", kLeastPrivPort, "bpf,perfmon,sys_admin,sys_ptrace");
	noptrace_ = Launch("noptrace", kNoPtracePort, "bpf,perfmon,sys_admin");
	AwaitHooks(leastpriv_, kLeastPrivPort, tp_probes);
	AwaitHooks(noptrace_, kNoPtracePort, tp_probes);
}

LeastPrivilegeAgents::~LeastPrivilegeAgents()
{
	Terminate(leastpriv_);
	Terminate(noptrace_);
}

void LeastPrivilegeAgents::Check(const std::string &prefix)
{
	std::string caps;
	std::vector<std::string> status;
	ReadLines("/proc/" + std::to_string(leastpriv_) + "/status", status);
	for (const std::string &line : StartingWith(status, "CapEff:")) {
		const std::vector<std::string> f = Fields(line);
		if (f.size() > 1)
			caps = f[1];
	}
	const std::string compared = "/tmp/lp.out";
	WriteText(compared, "");
	WriteText(kScrape, ""); // what the checks read when no scrape came
	double t0 = Uptime();
	while (Uptime() - t0 < 30) {
		if (Scrape(kLeastPrivPort, kScrape) &&
		    CompareWithThunks(kSubmissionFamilies, "", kScrape, compared))
			break;
		Nap(0.3);
	}
	if (!Run("least-privilege", { prefix + ":least-privilege", caps, compared, kScrape })) {
		Dump(prefix + "-leastpriv", compared);
		Dump(prefix + "-leastpriv", "/tmp/agent-leastpriv.out");
	}
	bool denied = false;
	t0 = Uptime();
	while (Uptime() - t0 < 30 && !denied) {
		std::vector<std::string> lines;
		if (Scrape(kNoPtracePort, kScrape) && ReadLines(kScrape, lines))
			for (const std::string &line :
			     StartingWith(lines, "gpuq_queue_samples_total{result=\"denied\"}")) {
				const std::vector<std::string> f = Fields(line);
				denied |= f.size() > 1 && std::atof(f[1].c_str()) > 0;
			}
		if (!denied)
			Nap(0.3);
	}
	if (!Run("no-ptrace", { prefix + ":no-ptrace", denied ? "1" : "0", kScrape,
				"/tmp/agent-noptrace.out" })) {
		Dump(prefix + "-noptrace", "/tmp/agent-noptrace.out");
		Dump(prefix + "-noptrace", kScrape);
	}
}

} // namespace sim_check
