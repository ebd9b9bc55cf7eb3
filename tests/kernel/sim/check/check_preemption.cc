// sim_check check-preemption OUT SCHED_PREEMPT: the preemption model
// `gpuq-agent check` (stdout OUT) reads equals the kernel's (SCHED_PREEMPT:
// the text of debugfs sched/preempt, the model in parentheses: "voluntary"
// on Debian's 6.1 and 6.12, "lazy" from 6.16), and a model that preempts
// programs (full, lazy, rt) is named as a cause of skipped runs. Check
// check:preemption.
#include "command.h"
#include "lines.h"
#include "verdict.h"

namespace sim_check
{
namespace
{

int CheckPreemption(const std::vector<std::string> &args)
{
	if (args.size() != 2)
		return UsageError("check-preemption OUT SCHED_PREEMPT");
	std::vector<std::string> out;
	if (!ReadLines(args[0], out))
		return UsageError("cannot read " + args[0]);
	const std::string &model = args[1];
	std::string mode;
	const size_t open = model.find('('), close = model.find(')', open);
	if (open != std::string::npos && close != std::string::npos)
		mode = model.substr(open + 1, close - open - 1);
	std::string line;
	for (const std::string &l : out) {
		if (l.compare(0, 14, "  preemption: ") == 0) {
			line = l.substr(2);
			break;
		}
	}
	if (mode.empty() ||
	    mode.find_first_not_of("abcdefghijklmnopqrstuvwxyz") != std::string::npos) {
		Fail("check:preemption",
		     "no mode in debugfs sched/preempt ('" + model + "'); check: " + line);
		return 0;
	}
	const bool preempts = mode == "full" || mode == "lazy" || mode == "rt";
	const std::string want = "preemption: preempt=" + mode + " (debugfs sched/preempt)";
	const std::string more = ": programs can be preempted, ";
	const bool ok =
	    preempts ? line.compare(0, want.size() + more.size(), want + more) == 0 : line == want;
	if (ok)
		Pass("check:preemption", "sched/preempt '" + model + "'; check: " + line);
	else
		Fail("check:preemption",
		     "sched/preempt '" + model + "'; want '" + want + (preempts ? more + "*" : "") +
			 "', check: " + (line.empty() ? "no preemption line" : line));
	return 0;
}

const Registration kCheckPreemption("check-preemption", "OUT SCHED_PREEMPT", CheckPreemption);

} // namespace
} // namespace sim_check
