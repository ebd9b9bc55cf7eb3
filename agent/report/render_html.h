// `gpuq-agent report --output html`: one self-contained HTML file (inline
// CSS and inline SVG charts, no script, no network reference) with, per run,
// the headline figures, the users' classification verdict, the tables and
// the charts (queues per GPU, submission rate per container, runlist unmap
// durations, evictions); with several runs, a comparison table first.
#pragma once

#include <string>
#include <vector>

#include "report/run_report.h"

namespace gpuq::report {

std::string RenderHtml(const std::vector<RunReport>& runs);

/// Element ids of a run's charts (run index `i`), for tests and links.
std::string ChartId(size_t run, const char* chart);
inline constexpr const char* kChartQueues = "queues-per-gpu";
inline constexpr const char* kChartSubmissions = "submission-rate";
inline constexpr const char* kChartUnmaps = "unmap-durations";
inline constexpr const char* kChartEvictions = "evictions";
inline constexpr const char* kChartOffGpu = "off-gpu";

}  // namespace gpuq::report
