// The KEY=VALUE arguments of sim_check's scenarios (lifecycle,
// partitions-scenario, record-scenario, skips-scenario): what the guest
// knows and hands over (GPU ids, cgroup directories, the simulator's
// module), each named.
#ifndef GPUQ_SIM_CHECK_SCENARIO_KEYS_H
#define GPUQ_SIM_CHECK_SCENARIO_KEYS_H

#include <map>
#include <string>
#include <vector>

namespace sim_check
{

class ScenarioKeys
{
      public:
	// ARGS from FIRST up to "--" (FLAGS then holds the rest): each
	// KEY=VALUE; ERROR says the first that is not, or a key of REQUIRED
	// that is missing.
	bool Parse(const std::vector<std::string> &args, size_t first,
		   const std::vector<std::string> &required, std::string &error);
	const std::string &Get(const std::string &key) const
	{
		return keys_.at(key);
	}
	// The value's space-separated words.
	std::vector<std::string> Words(const std::string &key) const;
	const std::vector<std::string> &Flags() const
	{
		return flags_;
	}

      private:
	std::map<std::string, std::string> keys_;
	std::vector<std::string> flags_;
};

} // namespace sim_check

#endif
