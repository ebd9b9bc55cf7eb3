// sim_check bench-hooks gpu=HWS cgroup=DIR: what the agent's kernel hooks
// cost an ioctl, for bench/kfd_hooks.sh (never a test run: the guest's
// "bench" group runs only when named). One driver with an AQL queue on the
// HWS GPU times 500 of each ioctl the hooks sit on (kfd_sim_driver's
// "timed"): set-CU-mask and update (each also unmaps and maps the runlist),
// and create + destroy. Per round, with no agent and then with each tier's
// agent alone (started, attached, stopped), so every configuration sees the
// same guest; one line each:
//   GPUQ-BENCH <kernel> round=R tier=T op=OP ns_per_op=N cpu_ns_per_op=N
#include "command.h"
#include "guest_agent.h"
#include "lines.h"
#include "scenario_keys.h"
#include "sim_driver.h"
#include "tier_agents.h"
#include "verdict.h"

#include <csignal>
#include <cstdio>
#include <memory>
#include <regex>

namespace sim_check
{
namespace
{

const char *const kBenchHooksUsage = "gpu=HWS cgroup=DIR";

// The driver's last TIMED line's figures, "error=bad" without one that
// says bad=0.
std::string Timed(const std::string &output)
{
	static const std::regex timed(
	    "^DRV [0-9]+ TIMED .* (ns_per_op=[0-9]+ cpu_ns_per_op=[0-9]+) bad=0$");
	std::vector<std::string> lines;
	ReadLines(output, lines);
	std::string figures = "error=bad";
	for (const std::string &line : lines) {
		std::smatch m;
		if (StartsWith(line, "DRV "))
			if (line.find(" TIMED ") != std::string::npos)
				figures =
				    std::regex_match(line, m, timed) ? m[1].str() : "error=bad";
	}
	return figures;
}

void BenchLine(const std::string &text)
{
	std::printf("GPUQ-BENCH %s %s\n", KernelLabel(), text.c_str());
	std::fflush(stdout);
}

int BenchHooks(const std::vector<std::string> &args)
{
	ScenarioKeys keys;
	std::string error;
	if (!keys.Parse(args, 0, { "gpu", "cgroup" }, error))
		return UsageError("bench-hooks: " + error + "; " + kBenchHooksUsage);
	if (keys.Get("gpu").empty() || keys.Get("cgroup").empty())
		return UsageError(std::string("bench-hooks ") + kBenchHooksUsage);
	std::signal(SIGPIPE, SIG_IGN);
	SimDriver driver("bd", keys.Get("cgroup"));
	driver.Do("create bq " + keys.Get("gpu") + " aql");
	for (const char *round : { "1", "2", "3" }) {
		for (const std::string &tier : std::vector<std::string>{
			 "none", "btf-fentry", "btf-kprobe", "args-kprobe", "tracepoint" }) {
			std::unique_ptr<GuestAgent> agent;
			const std::string at = std::string("round=") + round + " tier=" + tier;
			if (tier != "none") {
				agent = std::make_unique<GuestAgent>(TierPort(tier),
								     tier == "tracepoint" ? 2 : 4);
				agent->Start("bench-" + tier, TierFlags(tier));
				if (agent->Up().empty()) {
					BenchLine(at + " error=not-attached");
					agent->Stop();
					continue;
				}
			}
			const std::vector<std::string> ops = { "cumask bq ffff0000",
							       "update bq 100 7",
							       "burst " + keys.Get("gpu") + " 1" };
			for (const std::string &op : ops) {
				driver.Do("timed 500 " + op);
				BenchLine(at + " op=" + op.substr(0, op.find(' ')) + " " +
					  Timed(driver.Output()));
			}
			if (agent)
				agent->Stop();
		}
	}
	driver.Exit();
	return 0;
}

const Registration kBenchHooks("bench-hooks", kBenchHooksUsage, BenchHooks);

} // namespace
} // namespace sim_check
