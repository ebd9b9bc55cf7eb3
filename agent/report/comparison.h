// The comparison of several runs (`gpuq-agent report a.gpuqcap b.gpuqcap`):
// one row per figure, one cell per run, written once for text, markdown and
// HTML (the JSON lists every run's own figures instead).
#pragma once

#include <string>
#include <vector>

#include "report/run_report.h"

namespace gpuq::report {

struct ComparisonRow {
  std::string what;                ///< "duration (s)"
  std::vector<std::string> cells;  ///< one per run, in the order given
};

/// Every row of the comparison of `runs`, ending with the verdict: the
/// headline figures, each container preempted in some run (matched by
/// name, "-" in a run it was not in), oversubscription, priorities,
/// evictions and the queue pattern.
std::vector<ComparisonRow> ComparisonRows(const std::vector<RunReport>& runs);

}  // namespace gpuq::report
