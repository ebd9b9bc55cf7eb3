// What the client runs (clients-scenario, max_hw_queues_scenario.h) read
// besides the agent's exposition: the null thunk's truth file (its "queue
// key=value ..." lines, tests/nullgpu/null_cp.c) and the clients' own output
// (rocr_client's "QUEUE", hip_client's "STREAM" lines).
#ifndef GPUQ_SIM_CHECK_CLIENT_RUNS_H
#define GPUQ_SIM_CHECK_CLIENT_RUNS_H

#include "thunk_truth.h"

#include <map>
#include <string>
#include <vector>

namespace sim_check
{

// A GPU's sums over the client's own queues of a thunk's truth: the packets
// it wrote (write indexes) and of those the null CP consumed the kernel
// dispatches, the extended (amd_ext) ones, those with the barrier bit, the
// barriers and the rest (vendor, agent, other).
struct ClientSums {
	double writes = 0, dispatches = 0, ext = 0, barrier_dispatches = 0, barriers = 0, other = 0;
};

// By gpu_id.
std::map<std::string, ClientSums> SumClientQueues(const std::vector<ThunkQueue> &queues);

} // namespace sim_check

#endif
