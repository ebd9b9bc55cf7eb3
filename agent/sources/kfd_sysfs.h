// The queue inventory amdkfd publishes in sysfs: ground truth for seeding the
// model at start and for periodic reconciliation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpuq {

/// KFD_CONTEXT_ID_PRIMARY: the kfd_process open("/dev/kfd") gives a process.
inline constexpr uint32_t kPrimaryContext = 0xFFFF;

/// One queue of /sys/class/kfd/kfd/proc/<pid>/queues/<qid>/{gpuid,type,size}
/// or, of a secondary context (7.2+), proc/<pid>/context_<id>/queues/<qid>/.
struct SysfsQueue {
  uint32_t pid = 0;       ///< lead_thread pid in the init pid namespace
  uint32_t queue_id = 0;  ///< KFD queue id, unique within its context
  uint32_t gpu_id = 0;
  uint32_t type =
      0;  ///< the kernel's kfd_queue_type (loader/kfd_queue_types.h)
  uint64_t size = 0;                   ///< ring size in bytes
  uint32_t context = kPrimaryContext;  ///< the context's id
};

/// True if `<kfd>` exists (amdkfd is loaded).
bool KfdPresent(const std::string& kfd_dir);

/// Reads every queue under `<kfd>/proc`, sorted by (pid, context, queue_id)
/// with the primary context first. A process
/// or queue that disappears while being read is skipped, not an error. Returns
/// false and sets *error only if `<kfd>/proc` cannot be listed.
bool ReadKfdQueues(const std::string& kfd_dir, std::vector<SysfsQueue>* out,
                   std::string* error);

}  // namespace gpuq
