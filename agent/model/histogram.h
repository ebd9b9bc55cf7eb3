// Duration histograms of the model (runlist operations, evictions): fixed
// buckets in seconds, counted per bucket; the exporter makes them cumulative.
#pragma once

#include <cstdint>
#include <vector>

namespace gpuq {

/// Upper bounds (seconds) of runlist map/unmap durations: from 1 us (an
/// MES add) to past amdkfd's 9 s preemption timeout
/// (queue_preemption_timeout_ms, default 9000), where an unmap returns -ETIME.
inline const std::vector<double>& RunlistBuckets() {
  static const std::vector<double> kBounds = {
      1e-6,   1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2,
      2.5e-2, 5e-2, 0.1,    0.25, 0.5,  1,      2.5,  5,    9,      10,   30};
  return kBounds;
}

/// Upper bounds (seconds) of evict-until-restore times: amdkfd restores
/// after PROCESS_RESTORE_TIME_MS (100 ms) at the earliest for TTM and
/// userptr evictions; suspend and SVM migrations can take seconds.
inline const std::vector<double>& EvictionBuckets() {
  static const std::vector<double> kBounds = {
      1e-4, 1e-3, 1e-2, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};
  return kBounds;
}

/// Observations per bucket: counts[i] holds those <= bounds[i] and >
/// bounds[i-1]; counts.back() those above every bound (+Inf).
struct DurationHistogram {
  std::vector<uint64_t> counts;
  uint64_t count = 0;
  double sum_seconds = 0;

  void Observe(const std::vector<double>& bounds, double seconds) {
    if (counts.size() != bounds.size() + 1) counts.assign(bounds.size() + 1, 0);
    size_t i = 0;
    while (i < bounds.size() && seconds > bounds[i]) ++i;
    ++counts[i];
    ++count;
    sum_seconds += seconds;
  }
  /// Adds another histogram over the same bounds (series folding).
  void Merge(const DurationHistogram& o) {
    if (o.counts.empty()) return;
    if (counts.size() != o.counts.size()) counts.assign(o.counts.size(), 0);
    for (size_t i = 0; i < counts.size(); ++i) counts[i] += o.counts[i];
    count += o.count;
    sum_seconds += o.sum_seconds;
  }
};

}  // namespace gpuq
