// sim_check: the kernel tiers' checks in compiled code. The guests
// (sim/guest-init.sh, guest-init.sh) boot, load the module and call
// sim_check's scenarios (lifecycle, *-scenario, qemu-guest), which start and
// drive their processes themselves and judge what they print with the
// other subcommands, one per check.
// Every check prints a verdict the host parses:
//   GPUQ-KTEST <kernel> <check> PASS|FAIL|SKIP <detail>
// (verdict.h; <kernel> from GPUQ_KERNEL). Runs in the guest as a static
// binary (run_sim_tier.sh builds it) and on the host for its cases
// (tests/kernel/CMakeLists.txt).
//
//   sim_check <command> ARGS...    (sim_check with no command lists them)
#include "command.h"
#include "verdict.h"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace sim_check
{
namespace
{

struct Entry {
	const char *usage;
	Command command;
};

std::map<std::string, Entry> &Commands()
{
	static std::map<std::string, Entry> commands;
	return commands;
}

} // namespace

Registration::Registration(const char *name, const char *usage, Command command)
{
	Commands()[name] = Entry{ usage, command };
}

bool Run(const std::string &name, const std::vector<std::string> &args)
{
	const auto it = Commands().find(name);
	if (it == Commands().end())
		return UsageError("no command " + name) == 0;
	const int failures = Failures();
	return it->second.command(args) == 0 && Failures() == failures;
}

int UsageError(const std::string &message)
{
	std::fprintf(stderr, "sim_check: %s\n", message.c_str());
	return 2;
}

} // namespace sim_check

int main(int argc, char **argv)
{
	const auto &commands = sim_check::Commands();
	auto it = argc > 1 ? commands.find(argv[1]) : commands.end();
	if (it == commands.end()) {
		std::fprintf(stderr, "sim_check: %s%s; commands:\n",
			     argc > 1 ? "no command " : "no command given",
			     argc > 1 ? argv[1] : "");
		for (const auto &[name, entry] : commands)
			std::fprintf(stderr, "  sim_check %s %s\n", name.c_str(), entry.usage);
		return 2;
	}
	const int rc = it->second.command(std::vector<std::string>(argv + 2, argv + argc));
	return rc == 0 && sim_check::AnyFailed() ? 1 : rc;
}
