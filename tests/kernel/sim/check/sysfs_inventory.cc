// sim_check sysfs-inventory CHECK KFD TRUTH: the simulator's own sysfs
// agrees with its truth: the queue directories under KFD/proc (a process's
// proc/<pid>/queues/<id>, and its secondary contexts'
// proc/<pid>/context_<id>/queues/<id>, 7.2+) are the live queues of TRUTH
// ("queues" lines).
#include "command.h"
#include "guest_process.h"
#include "mode_inputs.h"
#include "truth.h"
#include "verdict.h"

namespace sim_check
{
namespace
{

int SysfsInventory(const std::vector<std::string> &args)
{
	if (args.size() != 3)
		return UsageError("sysfs-inventory CHECK KFD TRUTH");
	Truth truth;
	std::string error;
	if (!ReadTruth(args[2], truth, error))
		return UsageError(error);
	const std::string proc = args[1] + "/proc";
	size_t dirs = 0;
	for (const std::string &pid : Entries(proc)) {
		dirs += Entries(proc + "/" + pid + "/queues").size();
		for (const std::string &context : Entries(proc + "/" + pid))
			if (StartsWith(context, "context_"))
				dirs +=
				    Entries(proc + "/" + pid + "/" + context + "/queues").size();
	}
	const double live = truth.Sum("queues");
	if (static_cast<double>(dirs) == live)
		return Judged(true, args[0],
			      std::to_string(dirs) + " queue directories under " + proc +
				  " = live queues in the truth");
	return Judged(false, args[0],
		      std::to_string(dirs) + " queue directories, truth says " + Number(live));
}

const Registration kSysfsInventory("sysfs-inventory", "CHECK KFD TRUTH", SysfsInventory);

} // namespace
} // namespace sim_check
