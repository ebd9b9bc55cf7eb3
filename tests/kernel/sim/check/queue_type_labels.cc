// The agent's queue_type labels are the real module's enumerator names (the
// truth's labels, /sys/kernel/debug/kfd_sim/queue_types, from
// kfd_sim_btf.h), which put SDMA_XGMI at 4 up to 6.18 and at 3 from 7.2 (DIQ
// removed). Negative control: the same comparison with the other kernels'
// numbering must find a difference (d2's b4 is an sdma_xgmi queue).
//
//   sim_check queue-types-other SERIES: the other numbering as sim_compare's
//     QTYPE lines, for the guest's negative control.
//   sim_check queue-type-labels CHECK SERIES QUEUE_TYPES CMP_OUT OTHER_OUT
//     METRICS: the verdict, from the module's enumerators (QUEUE_TYPES), the
//     comparison with them (CMP_OUT), the one with the other numbering
//     (OTHER_OUT) and the agent's exposition (METRICS). Exit 1 on FAIL.
#include "command.h"
#include "mode_inputs.h"

#include <cstdio>

namespace sim_check
{
namespace
{

struct Numbering {
	std::string xgmi;  // SDMA_XGMI's value on SERIES
	std::string other; // the other kernels' enumerators, "N name;..."
};

Numbering NumberingOf(const std::string &series)
{
	if (StartsWith(series, "6.") || series == "7.0" || series == "7.1")
		return { "4", "0 compute;1 sdma;2 hiq;3 sdma_xgmi;4 sdma_by_eng_id" };
	return { "3", "0 compute;1 sdma;2 hiq;3 diq;4 sdma_xgmi;5 sdma_by_eng_id" };
}

int QueueTypesOther(const std::vector<std::string> &args)
{
	if (args.size() != 1)
		return UsageError("queue-types-other SERIES");
	const std::string other = NumberingOf(args[0]).other + ";";
	for (size_t at = 0, end; (end = other.find(';', at)) != std::string::npos; at = end + 1)
		std::printf("QTYPE %s\n", other.substr(at, end - at).c_str());
	return 0;
}

int QueueTypeLabels(const std::vector<std::string> &args)
{
	if (args.size() != 6)
		return UsageError(
		    "queue-type-labels CHECK SERIES QUEUE_TYPES CMP_OUT OTHER_OUT METRICS");
	const std::string &series = args[1];
	std::vector<std::string> types, metrics;
	Comparison cmp, other;
	std::string error;
	if (!ReadLines(args[2], types, error) || !ReadComparison(args[3], cmp, error) ||
	    !ReadComparison(args[4], other, error) || !ReadLines(args[5], metrics, error))
		return UsageError(error);
	std::string xgmi;
	for (const std::string &line : types) {
		const std::vector<std::string> f = Fields(line);
		if (f.size() > 1 && f[1] == "sdma_xgmi" && xgmi.empty())
			xgmi = f[0];
	}
	bool labelled = false;
	for (const std::string &line : metrics)
		labelled = labelled || line.find("queue_type=\"sdma_xgmi\"") != std::string::npos;
	bool other_differs = false;
	for (const std::string &line : other.lines)
		other_differs = other_differs || StartsWith(line, "RESULT diff");
	const Numbering numbering = NumberingOf(series);
	if (xgmi == numbering.xgmi && cmp.Equal() && labelled && other_differs)
		return Judged(true, args[0],
			      "kernel enum: sdma_xgmi = " + xgmi +
				  "; the agent's creates by queue_type equal the truth's labels; "
				  "with the other kernels' numbering (" +
				  numbering.other + ") they differ: " +
				  std::to_string(other.DiffCount()) + " series");
	return Judged(false, args[0],
		      "sdma_xgmi = " + (xgmi.empty() ? "none" : xgmi) + " (want " + numbering.xgmi +
			  " on " + series + "); agent = truth: " + (cmp.Equal() ? "yes" : "no") +
			  "; negative control: " + other.Last());
}

const Registration kQueueTypesOther("queue-types-other", "SERIES", QueueTypesOther);
const Registration kQueueTypeLabels("queue-type-labels",
				    "CHECK SERIES QUEUE_TYPES CMP_OUT OTHER_OUT METRICS",
				    QueueTypeLabels);

} // namespace
} // namespace sim_check
