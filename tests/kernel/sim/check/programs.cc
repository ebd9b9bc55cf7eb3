#include "programs.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace sim_check
{
namespace programs
{

bool ReadOptions(const std::vector<std::string> &args, size_t from,
		 const std::vector<std::string> &keys, std::map<std::string, std::string> &out,
		 std::string &error)
{
	for (size_t i = from; i < args.size(); i++) {
		const size_t eq = args[i].find('=');
		const std::string key = args[i].substr(0, eq);
		if (eq == std::string::npos ||
		    std::find(keys.begin(), keys.end(), key) == keys.end()) {
			error = "not one of the KEY=VALUE arguments: " + args[i];
			return false;
		}
		out[key] = args[i].substr(eq + 1);
	}
	for (const std::string &key : keys) {
		if (!out.count(key)) {
			error = "no " + key + "= argument";
			return false;
		}
	}
	return true;
}

std::string Fixed(double v)
{
	char text[64];
	std::snprintf(text, sizeof(text), "%.6f", v);
	return text;
}

double ContainerSum(const Exposition &metrics, const std::string &family, const std::string &id,
		    Labels match)
{
	match.emplace_back("container", id);
	return metrics.Sum(family, match);
}

} // namespace programs
} // namespace sim_check
