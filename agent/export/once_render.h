// --once output: the metric families Collect() returns, as a table for
// people, JSON for scripts, or the exposition text /metrics would serve.
#pragma once

#include <prometheus/metric_family.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuq {

enum class OnceFormat { kTable, kJson, kPrometheus };

/// A process holding queues, as --once lists it (not a metric: pids are not
/// labels unless asked for).
struct OnceProcess {
  std::string container, pod, ns;
  uint32_t pid = 0;
  std::string comm;
  bool exited = false;
  std::map<uint32_t, uint32_t> queues_per_gpu;
  /// AQL packets per second between the last two samples, by gpu.
  std::map<uint32_t, double> submission_rate_per_gpu;
};

/// Parses "table", "json" or "prometheus".
std::optional<OnceFormat> ParseOnceFormat(const std::string& name);

/// Renders `families` (from BuildFamilies) in `format`; table and JSON also
/// list `processes`.
std::string RenderOnce(const std::vector<prometheus::MetricFamily>& families,
                       OnceFormat format,
                       const std::vector<OnceProcess>& processes = {});

}  // namespace gpuq
