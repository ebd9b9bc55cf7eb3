// The queue inventory amdkfd publishes in sysfs: ground truth for seeding the
// model at start and for periodic reconciliation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpuq {

/// One queue of /sys/class/kfd/kfd/proc/<pid>/queues/<qid>/{gpuid,type,size}.
struct SysfsQueue {
  uint32_t pid = 0;       ///< lead_thread pid in the init pid namespace
  uint32_t queue_id = 0;  ///< KFD queue id
  uint32_t gpu_id = 0;
  uint32_t type = 0;  ///< kfd_queue_type (0 compute, 1 sdma, ...)
  uint64_t size = 0;  ///< ring size in bytes
};

/// True if `<kfd>` exists (amdkfd is loaded).
bool KfdPresent(const std::string& kfd_dir);

/// Reads every queue under `<kfd>/proc`, sorted by (pid, queue_id). A process
/// or queue that disappears while being read is skipped, not an error. Returns
/// false and sets *error only if `<kfd>/proc` cannot be listed.
bool ReadKfdQueues(const std::string& kfd_dir, std::vector<SysfsQueue>* out,
                   std::string* error);

}  // namespace gpuq
