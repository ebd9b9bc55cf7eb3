// sim_check check-hooks GROUP MODE TIER RC OUT ERR --probes LIST
//   [--missing LIST] [--not-needed LIST]:
// the QEMU guest's verdicts on one `gpuq-agent check` run (its exit status
// RC, its stdout OUT and stderr ERR): every hook the kernel has is attached
// in MODE by TIER; a hook whose function the kernel lacks, or that it does
// not need (context_exit before 7.2: no secondary KFD contexts), is reported
// with mode none, not attached, and the reason named. Checks GROUP:<probe>
// and GROUP:exit-code.
#include "check_report.h"
#include "command.h"
#include "hook_list.h"
#include "lines.h"
#include "verdict.h"

#include <cstdlib>

namespace sim_check
{
namespace
{

std::string Or(const std::string &s, const char *otherwise)
{
	return s.empty() ? otherwise : s;
}

void JudgeHook(const std::string &group, const Hook &h, const HookReport &r,
	       const std::string &mode, const std::string &tier, const std::string &stderr_text)
{
	const std::string check = group + ":" + h.probe;
	const char *kernel = std::getenv("GPUQ_KERNEL");
	const std::string got = "got function=" + Or(r.function, "?") + " mode=" + Or(r.mode, "?") +
				" attached=" + Or(r.attached, "?");
	if (h.missing || h.not_needed) {
		const std::string why =
		    h.not_needed ? "no secondary contexts" : "not in this kernel";
		if (h.Is(r.function) && r.mode == "none" && r.attached == "no" &&
		    r.detail.find(why) != std::string::npos)
			Pass(check, r.function + " on " + (kernel ? kernel : "?") +
					": mode=none attached=no (" + r.detail + ")");
		else
			Fail(check, "want " + h.Names() +
					" reported with mode=none attached=no, '" + why + "', " +
					got + " detail: " + Or(r.detail, "none"));
		return;
	}
	if (h.Is(r.function) && r.mode == mode && r.attached == "yes" && r.tier == tier)
		Pass(check, r.function + " mode=" + r.mode + " tier=" + r.tier +
				" attached=" + r.attached + " (" + r.detail + ")");
	else
		Fail(check, "want " + h.Names() + " mode=" + mode + " tier=" + tier +
				" attached=yes, got function=" + Or(r.function, "?") +
				" mode=" + Or(r.mode, "?") + " tier=" + Or(r.tier, "?") +
				" attached=" + Or(r.attached, "?") +
				" detail: " + Or(r.detail, "none") + "; stderr: " + stderr_text);
}

int CheckHooks(const std::vector<std::string> &argv)
{
	std::vector<std::string> args = argv;
	HookList list;
	std::string error;
	if (!TakeHookList(args, list, error))
		return UsageError(error);
	if (args.size() != 6)
		return UsageError("check-hooks GROUP MODE TIER RC OUT ERR --probes LIST "
				  "[--missing LIST] [--not-needed LIST]");
	const std::string &group = args[0], &mode = args[1], &tier = args[2], &rc = args[3];
	std::vector<std::string> out;
	if (!ReadLines(args[4], out))
		return UsageError("cannot read " + args[4]);
	const std::string stderr_text = OneLine(args[5]);
	for (const Hook &h : list.hooks)
		JudgeHook(group, h, ReportOf(out, h.probe), mode, tier, stderr_text);
	if (rc == "0")
		Pass(group + ":exit-code", "exit 0");
	else
		Fail(group + ":exit-code", "exit " + rc + ": " + stderr_text);
	return 0;
}

const Registration kCheckHooks("check-hooks",
			       "GROUP MODE TIER RC OUT ERR --probes LIST [--missing LIST] "
			       "[--not-needed LIST]",
			       CheckHooks);

} // namespace
} // namespace sim_check
