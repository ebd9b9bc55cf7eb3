// sim_check families-absent CHECK TIER METRICS FAMILY...: the exposition METRICS has
// no series of any FAMILY: a tier that cannot see them exports none, never a
// zero standing in for a number (docs/probe-tiers.md "What each tier
// gives"). Exit 1 on FAIL (the guest dumps the series).
#include "command.h"
#include "exposition.h"
#include "mode_inputs.h"

namespace sim_check
{
namespace
{

int Absent(const std::vector<std::string> &args)
{
	if (args.size() < 4)
		return UsageError("families-absent CHECK TIER METRICS FAMILY...");
	Exposition metrics;
	std::string error;
	if (!ReadExposition(args[2], metrics, error))
		return UsageError(error);
	std::string families;
	size_t n = 0;
	for (size_t i = 3; i < args.size(); i++) {
		families += (i > 3 ? " " : "") + args[i];
		for (const Sample &s : metrics.samples)
			n += s.name == args[i];
	}
	if (n == 0)
		return Judged(true, args[0],
			      "tier " + args[1] + ": no series of " + families +
				  " (the tier cannot see them)");
	return Judged(false, args[0],
		      "tier " + args[1] + " exports " + std::to_string(n) + " series of " +
			  families);
}

const Registration kAbsent("families-absent", "CHECK TIER METRICS FAMILY...", Absent);

} // namespace
} // namespace sim_check
