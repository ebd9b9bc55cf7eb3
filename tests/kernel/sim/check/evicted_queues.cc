// sim_check evicted-queues CHECK TRUTH: d1 is still evicted (d5's SVM
// eviction) when the evictions are compared, so its queues were compared as
// evicted, not only as zeros: the truth counts some evicted queues.
#include "command.h"
#include "mode_inputs.h"
#include "truth.h"
#include "verdict.h"

namespace sim_check
{
namespace
{

int EvictedQueues(const std::vector<std::string> &args)
{
	if (args.size() != 2)
		return UsageError("evicted-queues CHECK TRUTH");
	Truth truth;
	std::string error;
	if (!ReadTruth(args[1], truth, error))
		return UsageError(error);
	const double n = truth.Sum("evicted_queues");
	if (n > 0)
		return Judged(true, args[0],
			      Number(n) + " queues of the evicted d1 held off the GPU, in "
					  "gpuq_queues_evicted as in the simulator");
	return Judged(false, args[0],
		      "d1 should hold evicted queues now: the simulator counts " + Number(n));
}

const Registration kEvictedQueues("evicted-queues", "CHECK TRUTH", EvictedQueues);

} // namespace
} // namespace sim_check
