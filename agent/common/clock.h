// Now, in nanoseconds, on the kernel's clocks: CLOCK_MONOTONIC is what
// bpf_ktime_get_ns() stamps records with (and what std::chrono::steady_clock
// reads on Linux), CLOCK_REALTIME what a capture's start is told in.
#pragma once

#include <time.h>

#include <cstdint>

namespace gpuq {

inline uint64_t ClockNowNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t MonotonicNowNs() { return ClockNowNs(CLOCK_MONOTONIC); }

/// CLOCK_MONOTONIC as of the last timer tick (1-10 ms behind): read from
/// memory the kernel updates, without the clock source a precise read
/// needs. For times measured in seconds and taken per event.
inline uint64_t MonotonicCoarseNowNs() {
  return ClockNowNs(CLOCK_MONOTONIC_COARSE);
}

}  // namespace gpuq
