// sim_check runlist-durations CHECK TRUTH BASE METRICS GPU: the HWS GPU's
// unmap and map duration histograms in METRICS hold at least the time the
// simulator spent waiting in them since the mode began (truth unmap_wait_us
// and map_wait_us of GPU, TRUTH less BASE): a lower bound, an operation
// cannot take less than its wait. SKIP while the agent exports no such
// families (no "# TYPE" line); exit 1 on FAIL (the guest dumps them).
#include "command.h"
#include "exposition.h"
#include "mode_inputs.h"
#include "truth.h"
#include "verdict.h"

#include <cstdio>
#include <cstdlib>

namespace sim_check
{
namespace
{

int RunlistDurations(const std::vector<std::string> &args)
{
	if (args.size() != 5)
		return UsageError("runlist-durations CHECK TRUTH BASE METRICS GPU");
	const std::string &gpu = args[4];
	Truth now, base;
	Exposition metrics;
	std::vector<std::string> lines;
	std::string error;
	if (!ReadTruth(args[1], now, error) || !ReadTruth(args[2], base, error) ||
	    !ReadExposition(args[3], metrics, error) || !ReadLines(args[3], lines, error))
		return UsageError(error);
	std::string missing;
	for (const char *op : { "unmap", "map" }) {
		const std::string family = std::string("gpuq_runlist_") + op + "_duration_seconds";
		bool typed = false;
		for (const std::string &line : lines)
			typed = typed || StartsWith(line, "# TYPE " + family + " ");
		if (!typed)
			missing += (missing.empty() ? "" : " ") + family;
	}
	if (!missing.empty()) {
		Skip(args[0], "not exported by this agent yet: " + missing +
				  " (pending: KERNEL runlist hooks, MODEL export)");
		return 0;
	}
	std::string detail;
	bool ok = true;
	for (const char *op : { "unmap", "map" }) {
		const std::string wait = std::string(op) + "_wait_us";
		const double waited = now.Sum(wait, gpu) - base.Sum(wait, gpu);
		char got[64];
		std::snprintf(
		    got, sizeof(got), "%.6f",
		    metrics.Sum(std::string("gpuq_runlist_") + op + "_duration_seconds_sum",
				{ { "gpu_id", gpu }, { "scheduler", "hws" } }));
		// the sum as printed (six decimals), as the shell compared it
		ok = ok && waited > 0 && std::strtod(got, nullptr) * 1000000 >= waited;
		detail += std::string(" ") + op + ": sum " + got + "s >= waited " + Number(waited) +
			  "us;";
	}
	return Judged(ok, args[0], ok ? detail : detail + " (GPUQ-LOG " + args[0] + ")");
}

const Registration kRunlistDurations("runlist-durations", "CHECK TRUTH BASE METRICS GPU",
				     RunlistDurations);

} // namespace
} // namespace sim_check
