// --once output: the metric families Collect() returns, as a table for
// people, JSON for scripts, or the exposition text /metrics would serve.
#pragma once

#include <prometheus/metric_family.h>

#include <optional>
#include <string>
#include <vector>

namespace gpuq {

enum class OnceFormat { kTable, kJson, kPrometheus };

/// Parses "table", "json" or "prometheus".
std::optional<OnceFormat> ParseOnceFormat(const std::string& name);

/// Renders `families` (from BuildFamilies) in `format`.
std::string RenderOnce(const std::vector<prometheus::MetricFamily>& families,
                       OnceFormat format);

}  // namespace gpuq
