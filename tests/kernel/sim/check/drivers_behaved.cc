// sim_check drivers-behaved CHECK DRIVERS-OUT DRIVER-ERRORS
// The guest's last check: every command went to a running driver
// (DRIVER-ERRORS, the guest's drv's complaints, is empty or absent) and
// every driver saw what it expected (no " BAD " line in DRIVERS-OUT, all the
// drivers' output; absent in a guest that ran none). Exit 1 when the verdict failed, 2 on bad
// input.
#include "command.h"
#include "verdict.h"

#include <fstream>
#include <sstream>

namespace sim_check
{
namespace
{

// The first three of LINES, each followed by ';' where it ended a line.
std::string FirstThree(const std::string &text)
{
	std::string out;
	int lines = 0;
	for (char c : text) {
		out += c == '\n' ? ';' : c;
		if (c == '\n' && ++lines == 3)
			break;
	}
	return out;
}

// PATH's text, "" when it is absent.
std::string Read(const std::string &path)
{
	std::ifstream in(path);
	std::stringstream all;
	if (in)
		all << in.rdbuf();
	return all.str();
}

int DriversBehaved(const std::vector<std::string> &a)
{
	if (a.size() != 3)
		return UsageError("drivers-behaved CHECK DRIVERS-OUT DRIVER-ERRORS");
	const std::string errors = Read(a[2]), out = Read(a[1]);
	std::string bad;
	if (!errors.empty()) {
		Fail(a[0],
		     "a command went to a driver that was not running: " + FirstThree(errors));
		return 1;
	}
	std::istringstream lines(out);
	std::string line;
	int drv = 0;
	while (std::getline(lines, line)) {
		if (line.find(" BAD ") != std::string::npos)
			bad += line + "\n";
		drv += line.rfind("DRV ", 0) == 0;
	}
	if (!bad.empty()) {
		Fail(a[0], "a driver saw an unexpected result: " + FirstThree(bad));
		return 1;
	}
	Pass(a[0], "every driver command behaved as expected (" + std::to_string(drv) + " lines)");
	return 0;
}

const Registration kDriversBehaved("drivers-behaved", "CHECK DRIVERS-OUT DRIVER-ERRORS",
				   DriversBehaved);

} // namespace
} // namespace sim_check
