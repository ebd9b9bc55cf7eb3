// sim_check context-close CHECK BEFORE NOW: closing a secondary KFD context's file
// (7.2+) ended one context with its two queues: between the truths BEFORE
// and NOW, one more exit and two more exit-teardown destroys (destroy lines
// with b = 2). The agent's side is compared by the check before this one.
#include "command.h"
#include "mode_inputs.h"
#include "truth.h"
#include "verdict.h"

namespace sim_check
{
namespace
{

int Context(const std::vector<std::string> &args)
{
	if (args.size() != 3)
		return UsageError("context-close CHECK BEFORE NOW");
	Truth before, now;
	std::string error;
	if (!ReadTruth(args[1], before, error) || !ReadTruth(args[2], now, error))
		return UsageError(error);
	const double exits = now.Sum("exit") - before.Sum("exit");
	const double torn = now.Sum("destroy", "", "", "2") - before.Sum("destroy", "", "", "2");
	if (exits == 1 && torn == 2)
		return Judged(
		    true, args[0],
		    "the simulator tore a secondary context down: 1 exit, 2 exit-teardown "
		    "destroys (sysfs had proc/<pid>/context_<id>); the agent agreed above");
	return Judged(false, args[0],
		      "the close should have ended 1 context with 2 queues; the truth moved by " +
			  Number(exits) + " exits, " + Number(torn) + " exit-teardown destroys");
}

const Registration kContext("context-close", "CHECK BEFORE NOW", Context);

} // namespace
} // namespace sim_check
