// sim_check client-stops GROUP NAME SERVES CLIENT-OUT: GROUP:stops, after
// NAME's client exited: it did every command as expected (no "BAD" line in
// its output CLIENT-OUT) and the agent still serves /metrics (SERVES: yes or
// no, the guest's last scrape) for the next run.
#include "lines.h"
#include "client_runs.h"
#include "command.h"
#include "verdict.h"

namespace sim_check
{
namespace
{

int ClientStops(const std::vector<std::string> &args)
{
	if (args.size() != 4 || (args[2] != "yes" && args[2] != "no"))
		return UsageError("client-stops GROUP NAME yes|no CLIENT-OUT");
	std::vector<std::string> out;
	std::string error, bad;
	if (!ReadLines(args[3], out, error))
		return UsageError(error);
	int shown = 0;
	bool any = false;
	for (const std::string &line : out) {
		if (line.compare(0, 3, "BAD") != 0)
			continue;
		any = true;
		if (shown++ < 3)
			bad += line + ";";
	}
	if (args[2] == "yes" && !any)
		Pass(args[0] + ":stops", "the " + args[1] +
					     " client: every command as expected, exited; the "
					     "agent serves on for the next run");
	else
		Fail(args[0] + ":stops", "the agent serves /metrics: " + args[2] + "; the " +
					     args[1] + " client: " + bad);
	return 0;
}

const Registration kClientStops("client-stops", "GROUP NAME yes|no CLIENT-OUT", ClientStops);

} // namespace
} // namespace sim_check
