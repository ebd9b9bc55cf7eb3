#include "scenario_keys.h"

#include "lines.h"

namespace sim_check
{

bool ScenarioKeys::Parse(const std::vector<std::string> &args, size_t first,
			 const std::vector<std::string> &required, std::string &error)
{
	size_t i = first;
	for (; i < args.size() && args[i] != "--"; ++i) {
		const size_t equals = args[i].find('=');
		if (equals == std::string::npos) {
			error = args[i] + " is not KEY=VALUE";
			return false;
		}
		keys_[args[i].substr(0, equals)] = args[i].substr(equals + 1);
	}
	if (i < args.size())
		flags_.assign(args.begin() + static_cast<long>(i) + 1, args.end());
	for (const std::string &key : required)
		if (!keys_.count(key)) {
			error = "no " + key + "=";
			return false;
		}
	return true;
}

std::vector<std::string> ScenarioKeys::Words(const std::string &key) const
{
	const auto it = keys_.find(key);
	return it == keys_.end() ? std::vector<std::string>{} : Fields(it->second);
}

} // namespace sim_check
