// sim_check record-sigint STATUS PROM SHORT_B: a bare `record` stopped by
// SIGINT (its exit status STATUS) after a queue of container B's was
// created: it exits 0 and its capture, replayed into PROM, holds the create
// (matched as grep matched it: container the first label, its value
// beginning with the short id).
#include "command.h"
#include "lines.h"
#include "text_file.h"
#include "verdict.h"

namespace sim_check
{
namespace
{

int RecordSigint(const std::vector<std::string> &args)
{
	if (args.size() != 3)
		return UsageError("record-sigint STATUS PROM SHORT_B");
	std::vector<std::string> replay;
	std::string error;
	if (!ReadLines(args[1], replay, error))
		return UsageError(error);
	const double creates =
	    SumOfLines(replay, "gpuq_queue_creates_total{container=\"" + args[2]);
	if (args[0] == "0" && creates == 1)
		Pass("record-sigint",
		     "SIGINT: exit 0, the capture replays with the create before it");
	else
		Fail("record-sigint", "exit " + args[0] +
					  " (want 0), creates of B in the capture: " +
					  Number(creates) + " (want 1)");
	return 0;
}

const Registration kRecordSigint("record-sigint", "STATUS PROM SHORT_B", RecordSigint);

} // namespace
} // namespace sim_check
