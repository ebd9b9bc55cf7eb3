// Whether the running amdkfd applies a queue's own priority (the 0-15 of
// AMDKFD_IOC_CREATE_QUEUE / UPDATE_QUEUE) or only its pipe's. Up to Linux
// 6.x, set_priority (kfd_mqd_manager.c) programs both: the HQD's
// cp_hqd_queue_priority = the queue priority, and cp_hqd_pipe_priority =
// pipe_priority_map[it] (low, medium, high). "drm/amdkfd: Disable MQD queue
// priority" (mainline 73463e26f7e2, Linux 7.0; its follow-up bfe60e539cf7
// in 7.1 and 7.0.y) stops writing cp_hqd_queue_priority: only the pipe
// priority remains. Read in Debian's linux-source: 6.12.117 programs it,
// 7.2.13 and 7.3.4 do not. Nothing in BTF or kallsyms tells the two apart
// (the change is inside a function body), so the release decides, before
// anything loads; an out-of-tree amdgpu (AMD's DKMS build, which carries its
// own amdkfd) follows its own version: unknown.
#pragma once

#include <string>

#include "common/host_paths.h"

namespace gpuq {

enum class QueuePriorityApplied {
  kProgrammed,  ///< queue and pipe priority both reach the hardware
  kIgnored,     ///< only the pipe priority does (7.0 and later)
  kUnknown,     ///< an out-of-tree amdgpu, or no release to read
};

/// "programmed", "ignored", "unknown": the label of
/// gpuq_kernel_queue_priority_info.
const char* QueuePriorityAppliedLabel(QueuePriorityApplied a);

struct QueuePriorityFact {
  QueuePriorityApplied applied = QueuePriorityApplied::kUnknown;
  std::string release;  ///< the kernel release it was decided from
  std::string why;      ///< one clause, for the log and docs
};

/// For an in-tree amdgpu of kernel `release` ("7.3.4+deb13-amd64").
QueuePriorityFact QueuePriorityOfRelease(const std::string& release);

/// For this host: uname's release, unless <sysfs>/module/amdgpu says the
/// module is out of tree (a `version` of its own, which in-tree amdgpu never
/// declares, or AMD's amdkcl compatibility module beside it).
QueuePriorityFact LoadQueuePriorityFact(const HostPaths& paths);

}  // namespace gpuq
