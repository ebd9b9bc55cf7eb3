// sim_check check-verify OUT ERR RELEASE --probes LIST [--missing LIST]:
// the QEMU guest's verdicts on `gpuq-agent check --verify` (stdout OUT,
// stderr ERR) on kernel RELEASE (uname -r). One per tier, check-verify:<tier>:
// every program of the fentry, kprobe, args-kprobe, tracepoint and doorbell
// tiers accepted by this kernel's verifier against the real amdgpu BTF, a
// function the kernel lacks named, not refused. And
// check-verify:doorbell-preemption: the doorbell uprobe programs hold
// preemption off where the kernel has the bpf_preempt_disable kfunc (6.10+;
// from 6.13 a preemptible uprobe program on a per-CPU private stack oopsed
// without it), chosen from the kernel's own BTF, which the release says what
// to expect of.
#include "command.h"
#include "hook_list.h"
#include "lines.h"
#include "verdict.h"

#include <cstdlib>

namespace sim_check
{
namespace
{

bool HasPreemptDisable(const std::string &release)
{
	const long major = std::strtol(release.c_str(), nullptr, 10);
	const size_t dot = release.find('.');
	const long minor =
	    dot == std::string::npos ? 0 : std::strtol(release.c_str() + dot + 1, nullptr, 10);
	return major > 6 || (major == 6 && minor >= 10);
}

int CheckVerify(const std::vector<std::string> &argv)
{
	std::vector<std::string> args = argv;
	HookList list;
	std::string error;
	if (!TakeHookList(args, list, error))
		return UsageError(error);
	if (args.size() != 3)
		return UsageError("check-verify OUT ERR RELEASE --probes LIST [--missing LIST]");
	std::vector<std::string> out;
	if (!ReadLines(args[0], out))
		return UsageError("cannot read " + args[0]);
	const std::string stderr_text = OneLine(args[1]), &release = args[2];
	std::vector<std::string> absent;
	for (const Hook &h : list.hooks)
		if (h.missing)
			absent.push_back(h.Names());
	for (const char *tier : { "fentry", "kprobe", "args-kprobe", "tracepoint", "doorbell" }) {
		const std::string prefix = "verifier, " + std::string(tier) + " programs: ";
		const std::string got = Join(StartingWith(out, prefix), "\n");
		std::string want = prefix + "all accepted";
		if (std::string(tier) == "fentry" && !absent.empty())
			want += " (not in this kernel: " + Join(absent, ", ") + ")";
		if (got == want)
			Pass("check-verify:" + std::string(tier), got);
		else
			Fail("check-verify:" + std::string(tier),
			     "want all accepted" +
				 (absent.empty() ? std::string()
						 : " (fentry: not in this kernel: " +
						       Join(absent, " ") + ")") +
				 "; got: " + (got.empty() ? "no line" : got) + "; " + stderr_text);
	}
	const std::string prefix = "  doorbell programs hold preemption off: ";
	const std::string want =
	    prefix +
	    (HasPreemptDisable(release)
		 ? "yes (the kernel has bpf_preempt_disable)"
		 : "no (the kernel lacks bpf_preempt_disable, Linux 6.10, and private stacks)");
	const std::string got = Join(StartingWith(out, prefix), "\n");
	if (got == want)
		Pass("check-verify:doorbell-preemption", release + ": " + got);
	else
		Fail("check-verify:doorbell-preemption", release + ": want '" + want + "'; got '" +
							     (got.empty() ? "no line" : got) + "'");
	return 0;
}

const Registration kCheckVerify("check-verify", "OUT ERR RELEASE --probes LIST [--missing LIST]",
				CheckVerify);

} // namespace
} // namespace sim_check
