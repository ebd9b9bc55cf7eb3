// sim_check driver-truth DRIVER_OUT CGROUP_ID QUEUE...: the submit and
// pending truth lines of the named queues (created while the agent ran) from
// the driver's own indexes: its last QUEUE lines (`truth`, one per live
// queue: "DRV <pid> QUEUE <name> gpu=G type=T ... submitted=S pending=P") in
// DRIVER_OUT. A queue's last line wins; the queues of one (GPU, type) add up
// (submissions) and of one GPU (pending packets). Prints truth lines for
// sim_compare's NOW input, no verdict.
#include "command.h"
#include "mode_inputs.h"
#include "verdict.h"

#include <cstdio>
#include <cstdlib>
#include <map>

namespace sim_check
{
namespace
{

struct DriverQueue {
	std::string gpu, type;
	double submitted = 0, pending = 0;
};

int DriverTruth(const std::vector<std::string> &args)
{
	if (args.size() < 2)
		return UsageError("driver-truth DRIVER_OUT CGROUP_ID QUEUE...");
	std::vector<std::string> lines, queue_lines;
	std::string error;
	if (!ReadLines(args[0], lines, error))
		return UsageError(error);
	for (const std::string &line : lines)
		if (line.find(" QUEUE ") != std::string::npos)
			queue_lines.push_back(line);
	// the last 20: one `truth` answer, every queue the driver holds
	if (queue_lines.size() > 20)
		queue_lines.erase(queue_lines.begin(), queue_lines.end() - 20);
	const std::vector<std::string> wanted(args.begin() + 2, args.end());
	std::map<std::string, std::string> field; // a key's last value, as awk's
	std::map<std::string, DriverQueue> queues;
	for (const std::string &line : queue_lines) {
		const std::vector<std::string> f = Fields(line);
		for (size_t i = 3; i < f.size(); i++) {
			const size_t eq = f[i].find('=');
			field[f[i].substr(0, eq)] =
			    eq == std::string::npos ? "" : f[i].substr(eq + 1);
		}
		if (f.size() < 4)
			continue;
		bool want = false;
		for (const std::string &w : wanted)
			want = want || w == f[3];
		if (!want)
			continue;
		queues[f[3]] = DriverQueue{ field["gpu"], field["type"],
					    std::strtod(field["submitted"].c_str(), nullptr),
					    std::strtod(field["pending"].c_str(), nullptr) };
	}
	const std::string &cgroup = args[1];
	std::map<std::string, double> submit, pending;
	for (const auto &[name, q] : queues) {
		submit["submit " + q.gpu + " " + q.type + " 0 " + cgroup] += q.submitted;
		pending["pending " + q.gpu + " 0 0 " + cgroup] += q.pending;
	}
	for (const auto &[key, value] : submit)
		std::printf("%s %s\n", key.c_str(), Number(value).c_str());
	for (const auto &[key, value] : pending)
		std::printf("%s %s\n", key.c_str(), Number(value).c_str());
	return 0;
}

const Registration kDriverTruth("driver-truth", "DRIVER_OUT CGROUP_ID QUEUE...", DriverTruth);

} // namespace
} // namespace sim_check
