// Counters kept per CPU in a BPF map, read as one monotonic total.
#pragma once

#include <atomic>
#include <cstdint>

namespace gpuq {

/// The sum over every possible CPU of the u64 at `key` in the per-CPU map
/// `map_fd`. A counter must never go back: when the map cannot be read, the
/// failure is logged (leveled, rate-limited, naming `what`) and the last sum
/// (`*last`, updated on every good read) is returned.
uint64_t SumPerCpu(int map_fd, uint32_t key, std::atomic<uint64_t>* last,
                   const char* what);

}  // namespace gpuq
