// sim_check expect-both CHECK SIM-FAMILIES THUNK-FAMILIES CMP CMPT LINES DROPS:
// CHECK's verdict for a runtime client's families, compared twice by the
// guest: CMP, sim_compare's output once SIM-FAMILIES converged on the
// simulator's truth (its submit/pending lines from the thunk), and CMPT, the
// same scrape against the thunk's truth alone for THUNK-FAMILIES (read only
// when CMP is ok: the guest compares it only then). LINES is the thunk's
// truth as truth lines (thunk-lines), whose values of THUNK-FAMILIES the
// PASS names; DROPS the agent's dropped events as the guest words them.
#include "lines.h"
#include "command.h"
#include "comparison.h"
#include "truth.h"
#include "verdict.h"

#include <set>
#include <sstream>

namespace sim_check
{
namespace
{

// The family a thunk truth line's WHAT stands for (sim_compare's mapping;
// anything else is a pending line).
std::string Family(const std::string &what)
{
	if (what == "queues")
		return "gpuq_queues";
	if (what == "processes")
		return "gpuq_processes";
	if (what == "create")
		return "gpuq_queue_creates_total";
	if (what == "destroy")
		return "gpuq_queue_destroys_total";
	if (what == "exit")
		return "gpuq_process_exits_total";
	if (what == "submit")
		return "gpuq_submissions_total";
	return "gpuq_queue_pending_packets";
}

// "create gpu 1 = 3, destroy(ioctl) gpu 1 = 1, ..." for the lines of FAMILIES.
std::string Values(const Truth &truth, const std::string &families)
{
	std::set<std::string> wanted;
	std::istringstream words(families);
	for (std::string f; words >> f;)
		wanted.insert(f);
	std::string out;
	for (const TruthLine &l : truth.lines) {
		if (!wanted.count(Family(l.what)))
			continue;
		if (!out.empty())
			out += ", ";
		out += l.what;
		if (l.what == "destroy")
			out += l.b == "1" ? "(ioctl)" : "(exit)";
		out += " gpu " + l.gpu + " = " + Number(l.value);
	}
	return out;
}

int ExpectBoth(const std::vector<std::string> &args)
{
	if (args.size() != 7)
		return UsageError(
		    "expect-both CHECK SIM-FAMILIES THUNK-FAMILIES CMP CMPT LINES DROPS");
	const std::string &check = args[0];
	Comparison cmp, cmpt;
	std::string error;
	if (!ReadComparison(args[3], cmp, error))
		return UsageError(error);
	if (!cmp.Equal()) {
		Fail(check, "simulator truth: " + cmp.Diffs(8));
		return 0;
	}
	if (!ReadComparison(args[4], cmpt, error))
		return UsageError(error);
	if (!cmpt.Equal()) {
		Fail(check, "thunk truth: " + cmpt.Diffs(8));
		return 0;
	}
	Truth lines;
	if (!ReadTruth(args[5], lines, error))
		return UsageError(error);
	Pass(check, cmp.SeriesCompared() + " series = simulator truth (" + args[1] + "), " +
			cmpt.SeriesCompared() + " = thunk truth (" + args[2] +
			"): " + Values(lines, args[2]) + "; drops: " + args[6]);
	return 0;
}

const Registration kExpectBoth("expect-both",
			       "CHECK SIM-FAMILIES THUNK-FAMILIES CMP CMPT LINES DROPS",
			       ExpectBoth);

} // namespace
} // namespace sim_check
