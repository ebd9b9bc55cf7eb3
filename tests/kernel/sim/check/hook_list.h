// The hooks a QEMU guest judges `gpuq-agent check` and /metrics by
// (qemu_guest.cc): "probe:function" pairs generated from the
// agent's hook table (tests/kernel/guest_hooks.cc), "probe:a|b" where a
// kernel renamed the function, and which of them this kernel lacks
// (missing) or does not need (not needed: context_exit before 7.2).
#ifndef GPUQ_SIM_CHECK_HOOK_LIST_H
#define GPUQ_SIM_CHECK_HOOK_LIST_H

#include <set>
#include <string>
#include <vector>

namespace sim_check
{

struct Hook {
	std::string probe;
	std::vector<std::string> functions; // the names it may have
	bool missing = false, not_needed = false;

	// NAME is one of the function's names.
	bool Is(const std::string &name) const;
	// The names as the guest lists them, "a|b".
	std::string Names() const;
};

struct HookList {
	std::vector<Hook> hooks;
	std::set<std::string> missing; // the --missing probes, also those not listed
};

// Reads "--probes LIST --missing LIST --not-needed LIST" (space-separated
// lists) from ARGS, removing them; false with ERROR on a malformed pair.
bool TakeHookList(std::vector<std::string> &args, HookList &out, std::string &error);

// Removes "--NAME VALUE" from ARGS into VALUE; false when absent.
bool TakeOption(std::vector<std::string> &args, const std::string &name, std::string &value);

} // namespace sim_check

#endif
