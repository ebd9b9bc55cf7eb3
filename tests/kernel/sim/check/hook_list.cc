#include "hook_list.h"

#include "lines.h"

#include <sstream>

namespace sim_check
{

bool Hook::Is(const std::string &name) const
{
	for (const std::string &f : functions)
		if (!name.empty() && f == name)
			return true;
	return false;
}

std::string Hook::Names() const
{
	std::string names;
	for (const std::string &f : functions)
		names += (names.empty() ? "" : "|") + f;
	return names;
}

bool TakeOption(std::vector<std::string> &args, const std::string &name, std::string &value)
{
	for (size_t i = 0; i + 1 < args.size(); i++) {
		if (args[i] == "--" + name) {
			value = args[i + 1];
			args.erase(args.begin() + i, args.begin() + i + 2);
			return true;
		}
	}
	return false;
}

bool TakeHookList(std::vector<std::string> &args, HookList &out, std::string &error)
{
	std::string probes, missing, not_needed;
	if (!TakeOption(args, "probes", probes)) {
		error = "--probes LIST is required";
		return false;
	}
	TakeOption(args, "missing", missing);
	TakeOption(args, "not-needed", not_needed);
	const std::vector<std::string> miss = Fields(missing), skip = Fields(not_needed);
	out.missing.insert(miss.begin(), miss.end());
	for (const std::string &pair : Fields(probes)) {
		const size_t colon = pair.find(':');
		if (colon == std::string::npos || colon == 0 || colon + 1 == pair.size()) {
			error = "not a probe:function pair: " + pair;
			return false;
		}
		Hook h;
		h.probe = pair.substr(0, colon);
		std::istringstream names(pair.substr(colon + 1));
		for (std::string f; std::getline(names, f, '|');)
			h.functions.push_back(f);
		h.missing = out.missing.count(h.probe) > 0;
		for (const std::string &s : skip)
			h.not_needed = h.not_needed || s == h.probe;
		out.hooks.push_back(std::move(h));
	}
	return true;
}

} // namespace sim_check
