// sim_check no-ptrace CHECK SEEN METRICS LOG: an agent without
// CAP_SYS_PTRACE cannot read a client's queues (process_vm_readv needs it):
// it counted samples denied (SEEN=1: the guest saw a denied count above 0 in
// METRICS, its last scrape), made up no submissions, and said so once in its
// LOG, naming the capability.
#include "lines.h"
#include "command.h"
#include "denied_samples.h"
#include "verdict.h"

#include <cstdlib>
#include <sstream>

namespace sim_check
{
namespace
{

int NoPtrace(const std::vector<std::string> &args)
{
	if (args.size() != 4 || (args[1] != "0" && args[1] != "1"))
		return UsageError("no-ptrace CHECK SEEN(0|1) METRICS LOG");
	const std::string &check = args[0];
	std::vector<std::string> metrics, log;
	std::string error;
	if (!ReadLines(args[2], metrics, error) || !ReadLines(args[3], log, error))
		return UsageError(error);
	double submissions = 0;
	for (const std::string &l : metrics) {
		if (l.rfind("gpuq_submissions_total{", 0) != 0)
			continue;
		const size_t at = l.find_last_of(" \t");
		submissions +=
		    std::strtod(l.c_str() + (at == std::string::npos ? 0 : at + 1), nullptr);
	}
	std::string said_line;
	int said = 0;
	for (const std::string &l : log) {
		if (l.find("CAP_SYS_PTRACE") == std::string::npos)
			continue;
		said++;
		said_line = l.substr(0, 160);
	}
	const std::string denied = DeniedSamples(metrics);
	const std::string sub = Number(submissions);
	if (args[1] == "1" && sub == "0" && said == 1)
		Pass(check,
		     "without CAP_SYS_PTRACE: " + denied +
			 " samples denied, no submissions made up, one log line: " + said_line);
	else
		Fail(check, "denied '" + denied + "' (want > 0), submissions " + sub +
				" (want 0), log lines naming CAP_SYS_PTRACE " +
				std::to_string(said) + " (want 1)");
	return 0;
}

const Registration kNoPtrace("no-ptrace", "CHECK SEEN(0|1) METRICS LOG", NoPtrace);

} // namespace
} // namespace sim_check
