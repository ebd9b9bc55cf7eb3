// What every benchmark reduces its repetitions with.
#pragma once

#include <time.h>

#include <algorithm>
#include <vector>

namespace gpuq::bench {

/// The median of `v` (the mean of the middle two for an even count); 0 for
/// none.
inline double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// This thread's CPU time (user + system), in seconds: what the thread
/// itself spent, whatever else runs on the machine.
inline double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace gpuq::bench
