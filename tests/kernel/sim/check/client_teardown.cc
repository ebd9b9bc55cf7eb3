// sim_check client-teardown GROUP METRICS CONTAINER: after the client's exit
// KFD tore its process down, so CONTAINER's gauges in the agent's scrape
// METRICS are back at zero (its counters stay: the families against both
// truths are TruthChecks::ExpectBoth's). Prints GROUP:teardown FAIL when
// they are not, nothing when they are (ExpectBoth says PASS).
#include "command.h"
#include "exposition.h"
#include "verdict.h"

namespace sim_check
{
namespace
{

int ClientTeardown(const std::vector<std::string> &args)
{
	if (args.size() != 3)
		return UsageError("client-teardown GROUP METRICS CONTAINER");
	Exposition metrics;
	std::string error;
	if (!ReadExposition(args[1], metrics, error))
		return UsageError(error);
	const Labels a = { { "container", args[2] } };
	const double queues = metrics.Sum("gpuq_queues", a);
	const double pending = metrics.Sum("gpuq_queue_pending_packets", a);
	if (queues != 0 || pending != 0)
		Fail(args[0] + ":teardown", "after the exit container A still has " +
						Number(queues) + " queues, " + Number(pending) +
						" pending packets");
	return 0;
}

const Registration kClientTeardown("client-teardown", "GROUP METRICS CONTAINER", ClientTeardown);

} // namespace
} // namespace sim_check
