// `gpuq-agent check`'s report as the QEMU guest reads it: one line per hook,
// "<probe> <function> <mode> <attached> <tier> <detail...>".
#ifndef GPUQ_SIM_CHECK_CHECK_REPORT_H
#define GPUQ_SIM_CHECK_CHECK_REPORT_H

#include <string>
#include <vector>

namespace sim_check
{

struct HookReport {
	std::string function, mode, attached, tier, detail;
};

// The first line of LINES about PROBE (all fields empty when none).
HookReport ReportOf(const std::vector<std::string> &lines, const std::string &probe);

} // namespace sim_check

#endif
