#include "check_report.h"

#include <sstream>

namespace sim_check
{

HookReport ReportOf(const std::vector<std::string> &lines, const std::string &probe)
{
	for (const std::string &l : lines) {
		std::istringstream in(l);
		std::string first;
		if (!(in >> first) || first != probe)
			continue;
		HookReport r;
		in >> r.function >> r.mode >> r.attached >> r.tier;
		for (std::string w; in >> w;)
			r.detail += (r.detail.empty() ? "" : " ") + w;
		return r;
	}
	return HookReport{};
}

} // namespace sim_check
