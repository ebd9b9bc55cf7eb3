// The priority class amdkfd schedules a queue's pipe at: its 16 queue
// priorities (AMDKFD_IOC_CREATE_QUEUE / UPDATE_QUEUE, 0..15) fall into three
// CP pipe priorities by pipe_priority_map[] (kfd_mqd_manager.c, the same
// from Linux 5.x to 7.3): 0-6 low, 7-10 medium, 11-15 high. HIP's stream
// priorities reach KFD as such queue priorities through ROCr.
#pragma once

#include <cstdint>

namespace gpuq {

enum class PriorityClass : uint32_t { kLow = 0, kMedium, kHigh, kUnknown };

/// A queue priority nobody asked for that we know of (a queue seeded from
/// sysfs, which shows none), or out of amdkfd's 0..15.
inline constexpr uint32_t kUnknownQueuePriority = 16;

inline PriorityClass PriorityClassOf(uint32_t queue_priority) {
  if (queue_priority <= 6) return PriorityClass::kLow;
  if (queue_priority <= 10) return PriorityClass::kMedium;
  if (queue_priority <= 15) return PriorityClass::kHigh;
  return PriorityClass::kUnknown;  // amdkfd refuses more than 15
}

inline const char* PriorityClassLabel(PriorityClass c) {
  switch (c) {
    case PriorityClass::kLow:
      return "low";
    case PriorityClass::kMedium:
      return "medium";
    case PriorityClass::kHigh:
      return "high";
    case PriorityClass::kUnknown:
      break;
  }
  return "unknown";
}

}  // namespace gpuq
