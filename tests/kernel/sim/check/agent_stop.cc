// sim_check agent-stop CHECK RESULT: the agent exited 0 after SIGTERM. RESULT is
// what stopping it gave (GuestAgent::Stop): "exit N", or "hung" when it was
// still running 10 s after SIGTERM (the guest then dumped its threads and killed it).
#include "command.h"
#include "mode_inputs.h"

namespace sim_check
{
namespace
{

int AgentStop(const std::vector<std::string> &args)
{
	if (args.size() != 2)
		return UsageError("agent-stop CHECK RESULT");
	if (args[1] == "exit 0")
		return Judged(true, args[0], "exit 0 after SIGTERM");
	return Judged(false, args[0], args[1] + " after SIGTERM");
}

const Registration kAgentStop("agent-stop", "CHECK RESULT", AgentStop);

} // namespace
} // namespace sim_check
