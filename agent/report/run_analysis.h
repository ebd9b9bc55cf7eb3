// Capture -> RunReport: the events go, in file order, through the same
// Pipeline (and Model) as /metrics and `--once --replay`, so every exported
// figure in a report equals what the agent exports for that capture. Facts
// the model does not keep (peaks, lifetimes, exact duration percentiles,
// eviction spans, per-bucket rates) are tracked from the raw records
// alongside. See docs/report.md for the definitions.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "report/run_report.h"
#include "sources/capture.h"
#include "sources/event.h"

namespace gpuq::report {

/// Slices kept per Timeline list (queue lifetimes, runlist ops, evictions);
/// beyond it they are only counted (Timeline::slices_omitted), so a capture
/// of hours of HWS churn stays bounded in memory.
inline constexpr size_t kMaxSlicesPerList = 200000;

/// Exact percentiles (nearest rank: the smallest value with at least p% of
/// the values at or below it) of durations in nanoseconds, in seconds.
DurationStats ComputeDurationStats(std::vector<uint64_t> durations_ns);

/// The users' rule: none without queues; more queues than GPUs when any GPU
/// ever held two or more at once; single queue when at most one was ever
/// live; else one per GPU.
QueueClass Classify(uint64_t peak_total,
                    const std::map<uint32_t, uint64_t>& peak_per_gpu);

/// Incremental analysis: Add() every record in file order, then Finish().
/// Memory grows with queues, processes, runlist operations and timeline
/// buckets, never with events x series.
class Analyzer {
 public:
  /// `step_s` is the timeline's bucket width (> 0).
  Analyzer(std::string name, double step_s, uint64_t start_realtime_ns);
  ~Analyzer();
  Analyzer(const Analyzer&) = delete;
  Analyzer& operator=(const Analyzer&) = delete;

  void Add(const Event& event);
  RunReport Finish();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

/// The most buckets a timeline has: 4.5 hours of 1 s buckets (more points
/// than any chart draws; the Perfetto trace has a counter event per bucket).
inline constexpr uint64_t kMaxTimelineBuckets = 1u << 14;

/// The bucket width AnalyzeCapture() uses for `capture`: `step_s`, or the
/// smallest whole multiple of it that keeps the timeline within
/// kMaxTimelineBuckets (a longer run, or a capture whose timestamps jump by
/// years, would otherwise take a bucket per second of the whole span).
double TimelineStep(const Capture& capture, double step_s);
/// The same from a capture's span (`empty`: it has no record).
double TimelineStep(const CaptureSpan& span, bool empty, double step_s);

/// Analyzes a capture read with ReadCapture(), with buckets of
/// TimelineStep(capture, step_s).
RunReport AnalyzeCapture(const Capture& capture, const std::string& name,
                         double step_s = 1.0);

/// Reads and analyzes `path`. On a capture ReadCapture() rejects (missing,
/// garbage, truncated, other ABI) returns false with its one-line *error.
/// With `allow_truncated`, a truncated capture's complete records are
/// analyzed and *error keeps ReadCapture's line as a warning.
bool AnalyzeCaptureFile(const std::string& path, double step_s,
                        bool allow_truncated, RunReport* out,
                        std::string* error);

}  // namespace gpuq::report
