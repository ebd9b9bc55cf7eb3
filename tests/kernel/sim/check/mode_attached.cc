// sim_check mode-attached CHECK METRICS MODE TIER PROBE...: every PROBE has a
// gpuq_probe_attached series with labels mode=MODE and tier=TIER at 1 in the
// exposition METRICS; the detail lists every gpuq_probe_attached series.
#include "command.h"
#include "exposition.h"
#include "mode_inputs.h"

namespace sim_check
{
namespace
{

int Attached(const std::vector<std::string> &args)
{
	if (args.size() < 4)
		return UsageError("mode-attached CHECK METRICS MODE TIER PROBE...");
	const std::string &mode = args[2], &tier = args[3];
	const std::string family = "gpuq_probe_attached";
	Exposition metrics;
	std::vector<std::string> lines;
	std::string error;
	if (!ReadExposition(args[1], metrics, error) || !ReadLines(args[1], lines, error))
		return UsageError(error);
	std::string bad;
	for (size_t i = 4; i < args.size(); i++) {
		const Labels want = { { "probe", args[i] }, { "mode", mode }, { "tier", tier } };
		bool found = false;
		for (const Sample &s : metrics.samples)
			found = found || (s.name == family && s.Matches(want) && s.value == 1);
		if (!found)
			bad += " " + args[i];
	}
	std::string all;
	for (const std::string &line : lines)
		if (StartsWith(line, family + "{"))
			all += line.substr(family.size()) + " ";
	if (bad.empty())
		return Judged(true, args[0],
			      "lifecycle probes attached as " + mode + ", tier " + tier +
				  "; all: " + all);
	return Judged(false, args[0],
		      "not attached as " + mode + "/" + tier + ":" + bad + "; all: " + all);
}

const Registration kAttached("mode-attached", "CHECK METRICS MODE TIER PROBE...", Attached);

} // namespace
} // namespace sim_check
