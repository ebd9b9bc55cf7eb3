#include "denied_samples.h"

#include <fstream>
#include <sstream>

namespace sim_check
{

std::string DeniedSamples(const std::vector<std::string> &metrics)
{
	const std::string prefix = "gpuq_queue_samples_total{result=\"denied\"}";
	std::string out;
	for (const std::string &l : metrics) {
		if (l.rfind(prefix, 0) != 0)
			continue;
		std::istringstream words(l);
		std::string name, value;
		words >> name >> value;
		out += (out.empty() ? "" : "\n") + value;
	}
	return out;
}

} // namespace sim_check
