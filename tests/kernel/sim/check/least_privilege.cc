// sim_check least-privilege CHECK CAPEFF CMP METRICS: the deployment's
// capabilities suffice. An agent run (capbound) with exactly CAP_BPF,
// CAP_PERFMON, CAP_SYS_ADMIN and CAP_SYS_PTRACE (CAPEFF, its CapEff in
// /proc/PID/status, must be 000000c000280000) samples a root client with
// every capability: CMP, sim_compare's output for its submissions and
// pending packets against the thunk's truth, is ok, and METRICS, its last
// scrape, counts no sample denied.
#include "lines.h"
#include "command.h"
#include "comparison.h"
#include "denied_samples.h"
#include "verdict.h"

namespace sim_check
{
namespace
{

const char kWantCaps[] = "000000c000280000";

int LeastPrivilege(const std::vector<std::string> &args)
{
	if (args.size() != 4)
		return UsageError("least-privilege CHECK CAPEFF CMP METRICS");
	const std::string &check = args[0], &caps = args[1];
	Comparison cmp;
	std::vector<std::string> metrics;
	std::string error;
	if (!ReadComparison(args[2], cmp, error) || !ReadLines(args[3], metrics, error))
		return UsageError(error);
	const std::string denied = DeniedSamples(metrics);
	if (cmp.Equal() && caps == kWantCaps && denied == "0") {
		Pass(check, "an agent with exactly CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN, "
			    "CAP_SYS_PTRACE (CapEff " +
				caps + ") samples the client (root, every capability): " +
				cmp.SeriesCompared() +
				" series = the thunk's truth, denied samples 0");
		return 0;
	}
	std::string hooks;
	for (const std::string &l : metrics)
		if (l.rfind("gpuq_probe_attached{probe=\"tp_", 0) == 0)
			hooks += l + " ";
	Fail(check, "CapEff '" + caps + "' (want " + kWantCaps + "), denied '" + denied +
			"', thunk truth: " + cmp.Diffs(6) + " its KFD hooks: " + hooks);
	return 0;
}

const Registration kLeastPrivilege("least-privilege", "CHECK CAPEFF CMP METRICS", LeastPrivilege);

} // namespace
} // namespace sim_check
