// The users' GPU_MAX_HW_QUEUES experiment (max_hw_queues_scenario.h): one
// HIP program per run, each in a container of its own; per run N the
// scenario leaves PREFIX<N>.held (the null thunk's truth while the program held
// its streams), PREFIX<N>.prom (the btf-fentry agent's last scrape) and
// PREFIX<N>.out (hip_client's output).
#ifndef GPUQ_SIM_CHECK_MAX_HW_QUEUES_H
#define GPUQ_SIM_CHECK_MAX_HW_QUEUES_H

#include <string>
#include <vector>

namespace sim_check
{

// What a run's thunk truth says: its queues (every KFD queue ROCr made, HIP's
// and its own), those live, those HIP's, and the kernel dispatches (amd_ext
// ones too) and those with the barrier bit on HIP's queues (the uprobes never
// see ROCr's internal ones).
struct HwQueuesTruth {
	double created = 0, live = 0, clients = 0, dispatches = 0, barrier_bit = 0;
};

bool ReadHwQueuesTruth(const std::string &path, HwQueuesTruth &out, std::string &error);

// A run: "N:CONTAINER[:RECORD-EXIT]" (GPU_MAX_HW_QUEUES=N, the container's
// 12 hex digits, the exit status of its `record`).
struct HwQueuesRun {
	std::string n, container, record_exit;
};

bool ParseHwQueuesRun(const std::string &arg, HwQueuesRun &out, std::string &error);

} // namespace sim_check

#endif
