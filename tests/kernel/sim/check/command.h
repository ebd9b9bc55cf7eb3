// sim_check's subcommands: each registers itself by name (a static
// Registration in its own file), so adding one touches no shared table.
#ifndef GPUQ_SIM_CHECK_COMMAND_H
#define GPUQ_SIM_CHECK_COMMAND_H

#include <string>
#include <vector>

namespace sim_check
{

// A subcommand: its arguments after its name. Returns 0 when it ran, 2 on a
// usage or input error (one line on stderr, through UsageError). sim_check
// then exits 1 instead of 0 when a verdict it printed was a FAIL (verdict.h),
// for the guest to dump its logs (`sim_check ... || dump ...`).
using Command = int (*)(const std::vector<std::string> &args);

struct Registration {
	Registration(const char *name, const char *usage, Command command);
};

// Runs the subcommand NAME in this process, as `sim_check NAME ARGS...`
// would, for the scenarios that run in compiled code (lifecycle.cc): true
// when it returned 0 and printed no FAIL (where the guest's shell went on to
// `|| dump ...`).
bool Run(const std::string &name, const std::vector<std::string> &args);

// Prints "sim_check: MESSAGE" on stderr and returns 2.
int UsageError(const std::string &message);

} // namespace sim_check

#endif
