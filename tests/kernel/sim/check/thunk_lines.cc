// sim_check thunk-lines EXITED TRUTH CGROUP: a null GPU thunk's truth file as
// the simulator's truth lines of the cgroup whose inode is CGROUP
// (sim_compare's format, "<what> <gpu_id> <a> <b> <cgroup> <value>"), gpu by
// gpu: the queues the thunk created; their submissions (write indexes: every
// queue starts at 0 under this agent); destroys, by ioctl (b=1) for those
// ROCr destroyed and, once EXITED is 1, by process exit (b=2) for the rest,
// with the process's exit; while it runs, its live queues, the process on
// each of their GPUs and their pending packets.
#include "command.h"
#include "thunk_truth.h"

#include <cstdio>

namespace sim_check
{
namespace
{

struct PerGpu {
	unsigned long long create = 0, submit = 0, ioctl = 0, gone = 0, live = 0, pending = 0;
};

void Line(const char *what, const std::string &gpu, int b, const std::string &cgroup,
	  unsigned long long value)
{
	std::printf("%s %s 0 %d %s %llu\n", what, gpu.c_str(), b, cgroup.c_str(), value);
}

int ThunkLines(const std::vector<std::string> &args)
{
	if (args.size() != 3 || (args[0] != "0" && args[0] != "1"))
		return UsageError("thunk-lines EXITED(0|1) TRUTH CGROUP-INODE");
	const bool exited = args[0] == "1";
	const std::string &cgroup = args[2];
	std::vector<ThunkQueue> queues;
	std::string error;
	if (!ReadThunkQueues(args[1], queues, error))
		return UsageError(error);
	std::map<std::string, PerGpu, GpuOrder> gpus;
	for (const ThunkQueue &q : queues) {
		PerGpu &g = gpus[q.Text("gpu_id")];
		g.create++;
		g.submit += q.Count("write_index");
		if (q.Count("live") == 0) {
			g.ioctl++;
		} else if (exited) {
			g.gone++;
		} else {
			g.live++;
			g.pending += q.Count("pending");
		}
	}
	if (exited)
		std::printf("exit 0 0 0 %s 1\n", cgroup.c_str());
	for (const auto &[gpu, g] : gpus) {
		Line("create", gpu, 0, cgroup, g.create);
		Line("submit", gpu, 0, cgroup, g.submit);
		if (g.ioctl)
			Line("destroy", gpu, 1, cgroup, g.ioctl);
		if (g.gone)
			Line("destroy", gpu, 2, cgroup, g.gone);
		if (g.live) {
			Line("queues", gpu, 0, cgroup, g.live);
			Line("processes", gpu, 0, cgroup, 1);
		}
		if (g.pending)
			Line("pending", gpu, 0, cgroup, g.pending);
	}
	return 0;
}

const Registration kThunkLinesCommand("thunk-lines", "EXITED(0|1) TRUTH CGROUP-INODE", ThunkLines);

} // namespace
} // namespace sim_check
