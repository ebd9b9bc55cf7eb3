// sim_check's subcommands: each registers itself by name (a static
// Registration in its own file), so adding one touches no shared table.
#ifndef GPUQ_SIM_CHECK_COMMAND_H
#define GPUQ_SIM_CHECK_COMMAND_H

#include <string>
#include <vector>

namespace sim_check
{

// A subcommand: its arguments after its name. Returns the process's exit
// status: 0 when it ran (whatever its verdicts; the hook mode's checks return
// 1 after a FAIL, for the guest to dump its logs: mode_inputs.h's Judged), 2
// on a usage or input error (one line on stderr, through UsageError or
// InputError).
using Command = int (*)(const std::vector<std::string> &args);

struct Registration {
	Registration(const char *name, const char *usage, Command command);
};

// Prints "sim_check: MESSAGE" on stderr and returns 2.
int UsageError(const std::string &message);

} // namespace sim_check

#endif
