// sim_check client-sums TRUTH: per GPU of a null GPU thunk's truth file, the
// client's own queues (owner=client, not ROCr's utility queues) as
//   GPU WRITES DISPATCHES BARRIERS OTHER EXT_DISPATCHES BARRIER_DISPATCHES
// the packets it wrote, and of those the null CP consumed the kernel
// dispatches, the barriers and the rest (vendor, agent, other), as the
// agent's packet_type="kernel_dispatch", "barrier" and "other" (with
// "unreadable") count them; then the extended (AmdFormat 3) dispatches and
// the dispatches that carry the barrier bit.
#include "command.h"
#include "thunk_truth.h"

#include <cstdio>

namespace sim_check
{
namespace
{

struct ClientSums {
	unsigned long long writes = 0, dispatches = 0, barriers = 0, other = 0, ext = 0,
			   barrier_dispatches = 0;
};

int ClientSumsCommand(const std::vector<std::string> &args)
{
	if (args.size() != 1)
		return UsageError("client-sums TRUTH");
	std::vector<ThunkQueue> queues;
	std::string error;
	if (!ReadThunkQueues(args[0], queues, error))
		return UsageError(error);
	std::map<std::string, ClientSums, GpuOrder> gpus;
	for (const ThunkQueue &q : queues) {
		if (q.Text("owner") != "client")
			continue;
		ClientSums &s = gpus[q.Text("gpu_id")];
		s.writes += q.Count("write_index");
		s.dispatches += q.Count("dispatches");
		s.barriers += q.Count("barriers");
		s.other += q.Count("vendor") + q.Count("agent") + q.Count("other");
		s.ext += q.Count("ext_dispatches");
		s.barrier_dispatches += q.Count("barrier_dispatches");
	}
	for (const auto &[gpu, s] : gpus)
		std::printf("%s %llu %llu %llu %llu %llu %llu\n", gpu.c_str(), s.writes,
			    s.dispatches, s.barriers, s.other, s.ext, s.barrier_dispatches);
	return 0;
}

const Registration kClientSums("client-sums", "TRUTH", ClientSumsCommand);

} // namespace
} // namespace sim_check
