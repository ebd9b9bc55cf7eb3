// sim_check expect-truth CHECK FAMILIES CMP_OUT METRICS: the verdict of
// TruthChecks::ExpectTruth (truth_checks.h), which scrapes METRICS and runs sim_compare
// into CMP_OUT until FAMILIES equal the simulator's truth or 30 s pass. PASS
// names the series compared and the agent's drops; FAIL the first DIFFs
// (exit 1: the guest then dumps the truth, sysfs and the agent's maps).
#include "command.h"
#include "mode_inputs.h"

namespace sim_check
{
namespace
{

int ExpectTruth(const std::vector<std::string> &args)
{
	if (args.size() != 4)
		return UsageError("expect-truth CHECK FAMILIES CMP_OUT METRICS");
	Comparison cmp;
	std::vector<std::string> metrics;
	std::string error;
	if (!ReadComparison(args[2], cmp, error) || !ReadLines(args[3], metrics, error))
		return UsageError(error);
	if (!cmp.Equal())
		return Judged(false, args[0], cmp.Diffs());
	return Judged(true, args[0],
		      cmp.Compared() + " series equal the simulator's truth (" + args[1] +
			  "); drops: " + Dropped(metrics));
}

const Registration kExpectTruth("expect-truth", "CHECK FAMILIES CMP_OUT METRICS", ExpectTruth);

} // namespace
} // namespace sim_check
