// The users' GPU_MAX_HW_QUEUES experiment, beside the runtime client runs:
// one HIP program (Debian's HIP 5.2.3 on the null thunk forwarding to
// /dev/kfd's node 1; `hip_client queues 8`: 8 streams, a kernel on each, one
// copy each way, held with its streams alive) at GPU_MAX_HW_QUEUES=1 and at
// 8, each in a container of its own, recorded through the btf-fentry agent's
// recording API (`record --from --container`) while it runs; then `report
// hwq-1=... hwq-8=...` compares the captures. max-hw-queues-live and
// max-hw-queues-report judge it (max_hw_queues.h).
#ifndef GPUQ_SIM_CHECK_MAX_HW_QUEUES_SCENARIO_H
#define GPUQ_SIM_CHECK_MAX_HW_QUEUES_SCENARIO_H

namespace sim_check
{

// The runs through the agent serving on PORT; FIFO as NullGpuRun's. Its
// checks (check_plan.h) skip when Debian's HIP is missing.
void MaxHwQueues(int port, bool fifo);

} // namespace sim_check

#endif
