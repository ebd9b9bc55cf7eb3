// The two ways amdkfd puts user queues on a GPU.
#pragma once

#include <cstdint>

namespace gpuq {

/// Runlist operations are unmaps (HWS unmap, MES remove) or maps (HWS map,
/// MES add), under one of two schedulers.
enum class Scheduler : uint32_t { kHws = 0, kMes = 1 };

}  // namespace gpuq
