// sim_check hook-presence KALLSYMS --probes LIST --missing LIST: the QEMU
// guest's check that the hooks whose function kallsyms lacks (as text, "t"
// or "T") are exactly those the host expects this kernel to lack (the
// hook-presence check). KALLSYMS is read once: under TCG each read of
// /proc/kallsyms costs seconds.
#include "command.h"
#include "hook_list.h"
#include "lines.h"
#include "verdict.h"

#include <cstdlib>
#include <set>
#include <sstream>

namespace sim_check
{
namespace
{

int HookPresence(const std::vector<std::string> &argv)
{
	std::vector<std::string> args = argv;
	HookList list;
	std::string error, missing;
	for (size_t i = 0; i + 1 < args.size(); i++)
		if (args[i] == "--missing")
			missing = args[i + 1];
	if (!TakeHookList(args, list, error))
		return UsageError(error);
	if (args.size() != 1)
		return UsageError("hook-presence KALLSYMS --probes LIST --missing LIST");
	std::vector<std::string> lines;
	if (!ReadLines(args[0], lines))
		return UsageError("cannot read " + args[0]);
	std::set<std::string> text;
	for (const std::string &l : lines) {
		std::istringstream in(l);
		std::string addr, type, name;
		if (in >> addr >> type >> name && (type == "t" || type == "T"))
			text.insert(name);
	}
	std::vector<std::string> absent;
	for (const Hook &h : list.hooks) {
		bool seen = false;
		for (const std::string &f : h.functions)
			seen = seen || text.count(f);
		if (!seen)
			absent.push_back(h.probe);
	}
	const std::string got = Join(absent, " "), want = Join(Fields(missing), " ");
	const char *kernel = std::getenv("GPUQ_KERNEL");
	if (got == want)
		Pass("hook-presence",
		     "hooks whose function kallsyms lacks: " + (got.empty() ? "none" : got) +
			 " (as expected for " + (kernel ? kernel : "?") + ")");
	else
		Fail("hook-presence",
		     "hooks whose function kallsyms lacks: " + (got.empty() ? "none" : got) +
			 "; expected for " + (kernel ? kernel : "?") + ": " +
			 (want.empty() ? "none" : want));
	return 0;
}

const Registration kHookPresence("hook-presence", "KALLSYMS --probes LIST --missing LIST",
				 HookPresence);

} // namespace
} // namespace sim_check
