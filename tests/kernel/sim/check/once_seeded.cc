// sim_check once-seeded CHECK RC CMP_OUT: `gpuq-agent --once -o prometheus` exited
// RC and (when RC is 0) sim_compare compared its gpuq_queues and
// gpuq_processes with the truth into CMP_OUT: both must hold. The agent was
// killed before, so --once must seed what it missed from sysfs. Exit 1 on
// FAIL (the guest dumps --once's output).
#include "command.h"
#include "mode_inputs.h"

namespace sim_check
{
namespace
{

int Once(const std::vector<std::string> &args)
{
	if (args.size() != 3)
		return UsageError("once-seeded CHECK RC CMP_OUT");
	Comparison cmp;
	std::string error;
	if (!ReadComparison(args[2], cmp, error))
		return UsageError(error);
	if (args[1] == "0" && cmp.Equal()) {
		const std::vector<std::string> f = Fields(cmp.Last());
		return Judged(true, args[0],
			      "--once -o prometheus: " + (f.size() > 2 ? f[2] : "") +
				  " queue/process series equal the truth");
	}
	return Judged(false, args[0], "exit " + args[1] + "; " + cmp.Diffs());
}

const Registration kOnce("once-seeded", "CHECK RC CMP_OUT", Once);

} // namespace
} // namespace sim_check
