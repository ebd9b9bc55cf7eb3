// sim_check partitions-scenario GROUP PER EXTRA KEY=VALUE...: partitioned
// GPUs. The simulator is reloaded with EXTRA more GPUs, PER partitions of
// each physical GPU (CPX: 8, DPX: 2); a process in container A holds a
// compute queue on every partition, one in container B an SDMA queue on
// each partition of the first physical GPU. The daemon's lifecycle
// families equal the truth, its GPU labels name each partition and its
// physical GPU (partitions-metrics), and so does `--once`
// (partitions-once); then the simulator is loaded back as it was. The
// verdicts are GROUP:<check> (check_plan.cc's kPartitionChecks).
//
//   module     the simulator's amdgpu.ko
//   sim-args   its parameters at every load (space-separated)
//   cgroups    the two containers' cgroup directories
#include "command.h"
#include "guest_agent.h"
#include "guest_process.h"
#include "lines.h"
#include "scenario_keys.h"
#include "sim_driver.h"
#include "sim_module.h"
#include "truth_checks.h"
#include "verdict.h"

#include <csignal>
#include <cstdlib>

namespace sim_check
{
namespace
{

const char *const kPartitionsUsage =
    "GROUP PER EXTRA module=KO sim-args=\"P=V...\" cgroups=\"A B\"";

// The static input of the comparisons (/tmp/static.in) with every GPU of
// the topology now: the saved one comes back at the end.
void StaticWithGpus()
{
	std::vector<std::string> lines;
	ReadLines("/tmp/static.saved", lines);
	std::string text;
	for (const std::string &line : lines)
		if (!StartsWith(line, "GPU "))
			text += line + "\n";
	WriteText("/tmp/static.in", text + GpuLines());
}

void Partitioned(const std::string &group, const std::string &count, int first,
		 const std::vector<std::string> &cgroups)
{
	const int nodes = std::atoi(count.c_str());
	GuestAgent agent(9464, 4);
	const TruthChecks truth(agent, "btf-fentry");
	agent.Start(group, {});
	if (agent.Up().empty()) {
		Fail(group + ":queues", "no /metrics with the lifecycle probes attached");
		Dump(group, "/tmp/agent-" + group + ".out");
		agent.Stop();
		return;
	}
	SimDriver pa("pa", cgroups[0]);
	SimDriver pb("pb", cgroups[1]);
	for (int node = first, i = 0; node <= nodes; ++node, ++i) {
		const std::string gpu = GpuOfNode(node);
		pa.Send("create p" + std::to_string(i) + " " + gpu + " aql");
		if (node < first + 8)
			pb.Send("create s" + std::to_string(i) + " " + gpu + " sdma");
	}
	pa.Do("version");
	pb.Do("version");
	Ktime(group + "-created");
	truth.ExpectTruth(group + ":queues", kLifecycleFamilies);
	agent.Scrape();
	WriteText("/tmp/part.truth", ReadText(kSimTruth));
	Run("partitions-metrics", { group, kTopology, count, kMetrics, "/tmp/part.truth" });
	agent.Stop();
	RunFor({ "/bin/gpuq-agent", "--once", "--interval", "1s", "--no-runtime-lookup" },
	       "/tmp/part-once.txt", "", 180);
	if (!Run("partitions-once", { group, kTopology, count, std::to_string(first),
				      "/tmp/part-once.txt", "/tmp/part.truth" }))
		Dump(group + "-once", "/tmp/part-once.txt");
	pa.Exit();
	pb.Exit();
}

int PartitionsScenario(const std::vector<std::string> &args)
{
	if (args.size() < 3)
		return UsageError(std::string("partitions-scenario ") + kPartitionsUsage);
	const std::string &group = args[0];
	ScenarioKeys keys;
	std::string error;
	if (!keys.Parse(args, 3, { "module", "sim-args", "cgroups" }, error))
		return UsageError("partitions-scenario: " + error + "; " + kPartitionsUsage);
	const std::vector<std::string> cgroups = keys.Words("cgroups");
	const int extra = std::atoi(args[2].c_str());
	if (keys.Get("module").empty() || cgroups.size() != 2 || extra <= 0 ||
	    std::atoi(args[1].c_str()) <= 0)
		return UsageError(std::string("partitions-scenario ") + kPartitionsUsage);
	std::signal(SIGPIPE, SIG_IGN);
	Ktime(group + "-start");
	const std::vector<std::string> sim_args = keys.Words("sim-args");
	std::vector<std::string> parameters = sim_args;
	parameters.push_back("extra_hws_gpus=" + args[2]);
	parameters.push_back("extra_partitions=" + args[1]);
	const bool loaded = Reload(keys.Get("module"), parameters, "/tmp/part-mod.txt");
	const int nodes = GpuNodes();
	const int first = nodes - extra + 1;
	if (!loaded || !HasModuleBtf() || first < 4) {
		Fail(group + ":reload", "rc=" + std::string(loaded ? "0" : "non-zero") + ", " +
					    std::to_string(nodes) + " GPU nodes, btf " +
					    (HasModuleBtf() ? "present" : "absent") + ": " +
					    OneLine("/tmp/part-mod.txt"));
		return 0;
	}
	const std::string count = std::to_string(nodes);
	Run("partitions-reload",
	    { group, kTopology, count, std::to_string(first), args[2], args[1] });
	WriteText("/tmp/static.saved", ReadText("/tmp/static.in"));
	StaticWithGpus();
	WriteText("/tmp/drv.truth", "");
	Partitioned(group, count, first, cgroups);
	WriteText("/tmp/static.in", ReadText("/tmp/static.saved"));
	if (!Reload(keys.Get("module"), sim_args, "/tmp/part-mod.txt"))
		Fail(group + ":reload",
		     "cannot load the simulator back: " + OneLine("/tmp/part-mod.txt"));
	Ktime(group + "-done");
	return 0;
}

const Registration kPartitionsScenario("partitions-scenario", kPartitionsUsage, PartitionsScenario);

} // namespace
} // namespace sim_check
