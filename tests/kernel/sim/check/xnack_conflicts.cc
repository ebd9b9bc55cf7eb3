// sim_check xnack-conflicts CHECK TRUTH BASE METRICS HAS_XNACK_CHAIN: the
// runlists the simulator built oversubscribed with an XNACK conflict since
// the mode began (truth "oversub" with a = 3, TRUTH less BASE) are the
// agent's maps under reason="xnack_conflict" in METRICS; there are some where
// amdkfd chains on mixed modes (HAS_XNACK_CHAIN 1: gmc.xnack_flags, 6.16+),
// none where it has no such test (0).
#include "command.h"
#include "exposition.h"
#include "mode_inputs.h"
#include "truth.h"
#include "verdict.h"

namespace sim_check
{
namespace
{

int XnackConflicts(const std::vector<std::string> &args)
{
	if (args.size() != 5 || (args[4] != "0" && args[4] != "1"))
		return UsageError("xnack-conflicts CHECK TRUTH BASE METRICS 0|1");
	Truth now, base;
	Exposition metrics;
	std::string error;
	if (!ReadTruth(args[1], now, error) || !ReadTruth(args[2], base, error) ||
	    !ReadExposition(args[3], metrics, error))
		return UsageError(error);
	const double want = now.Sum("oversub", "", "3") - base.Sum("oversub", "", "3");
	const double got = metrics.Sum("gpuq_runlist_oversubscribed_maps_total",
				       { { "reason", "xnack_conflict" } });
	const std::string w = Number(want), g = Number(got);
	if (args[4] == "0") {
		if (want == 0 && got == 0)
			return Judged(
			    true, args[0],
			    "this kernel's amdkfd has no XNACK test (no gmc.xnack_flags): the "
			    "runlist mixing XNACK modes fits (simulator 0, agent 0)");
		return Judged(false, args[0],
			      "the runlist mixing XNACK modes where amdkfd has no such test: "
			      "simulator " +
				  w + ", agent " + g + " oversubscribed maps, want 0");
	}
	if (want > 0 && got == want)
		return Judged(
		    true, args[0],
		    g + " runlists oversubscribed with mixed XNACK modes, as the simulator's " + w);
	return Judged(false, args[0],
		      "runlists oversubscribed with mixed XNACK modes: simulator " + w +
			  ", agent " + g + " (want equal, more than 0)");
}

const Registration kXnackConflicts("xnack-conflicts", "CHECK TRUTH BASE METRICS 0|1",
				   XnackConflicts);

} // namespace
} // namespace sim_check
