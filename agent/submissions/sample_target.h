// What the user-space readers (sampler, doorbell poller) need from the
// model. What the sampler reads for one live queue: where its write and read
// indexes live in the owner's memory. The pipeline lists them
// (Pipeline::SampleTargets); the sampler turns reads into
// GPUQ_EV_QUEUE_SAMPLE records.
#pragma once

#include <gpuq/abi.h>

#include <cstdint>

namespace gpuq {

struct SampleTarget {
  gpuq_event_header owner{};  ///< tgid, cgroup_id, process_key of the owner
  uint32_t gpu_id = 0;
  uint32_t queue_id = 0;
  uint64_t write_ptr = 0;  ///< user VA of amd_queue_t.write_dispatch_id
  uint64_t read_ptr = 0;   ///< user VA of amd_queue_t.read_dispatch_id
};

/// The queue a doorbell handle belongs to, learned at queue creation
/// (Pipeline::FindDoorbell).
struct DoorbellOwner {
  gpuq_event_header owner{};  ///< tgid, cgroup_id, process_key of the owner
  uint32_t gpu_id = 0;
  uint32_t queue_id = 0;
};

}  // namespace gpuq
