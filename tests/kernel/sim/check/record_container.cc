// sim_check record-container PROM SHORT_A SHORT_B DRIVER_B_OUT: the capture of
// `record --container <A> -- sh -c ...`, replayed by `--once -o prometheus`
// into PROM. The command moved a driver into container A (2 creates, 1
// ioctl destroy) while a driver in container B (its output DRIVER_B_OUT)
// created rb1 during the recording: the capture holds A's operations only.
// The series are matched as grep matched them: container the first label,
// its value beginning with the short id.
#include "command.h"
#include "lines.h"
#include "text_file.h"
#include "verdict.h"

namespace sim_check
{
namespace
{

int RecordContainer(const std::vector<std::string> &args)
{
	if (args.size() != 4)
		return UsageError("record-container PROM SHORT_A SHORT_B DRIVER_B_OUT");
	std::vector<std::string> replay, driver;
	std::string error;
	if (!ReadLines(args[0], replay, error) || !ReadLines(args[3], driver, error))
		return UsageError(error);
	const std::string a = "{container=\"" + args[1], b = "container=\"" + args[2];
	const double creates = SumOfLines(replay, "gpuq_queue_creates_total" + a);
	const double destroys =
	    SumOfLines(replay, "gpuq_queue_destroys_total" + a, { "reason=\"ioctl\"" });
	int series_of_b = 0;
	for (const std::string &line : replay)
		series_of_b += line.find(b) != std::string::npos;
	// B's create must have happened during the recording to mean anything
	bool b_created = false;
	for (const std::string &line : driver)
		b_created = b_created || line.find("rb1") != std::string::npos;
	if (creates == 2 && destroys == 1 && series_of_b == 0 && b_created)
		Pass("record-container", "capture of A: 2 creates, 1 ioctl destroy; B's create "
					 "during the recording left out");
	else
		Fail("record-container",
		     "creates of A: " + Number(creates) +
			 " (want 2), ioctl destroys: " + Number(destroys) +
			 " (want 1), series of B: " + std::to_string(series_of_b) + " (want 0)");
	return 0;
}

const Registration kRecordContainer("record-container", "PROM SHORT_A SHORT_B DRIVER_B_OUT",
				    RecordContainer);

} // namespace
} // namespace sim_check
