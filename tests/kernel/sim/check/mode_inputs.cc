#include "mode_inputs.h"

#include "lines.h"

#include "verdict.h"

#include <sstream>

namespace sim_check
{

std::string Dropped(const std::vector<std::string> &lines)
{
	const std::string family = "gpuq_events_dropped_total";
	std::string out;
	for (const std::string &line : lines) {
		const bool zero = EndsWith(line, " 0");
		if (StartsWith(line, family + "{") && !zero)
			out += line.substr(family.size()) + " ";
	}
	return out.empty() ? "none" : out;
}

int Judged(bool ok, const std::string &check, const std::string &detail)
{
	Verdict(ok, check, detail);
	return ok ? 0 : 1;
}

} // namespace sim_check
