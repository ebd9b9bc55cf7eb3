// RunReport -> text for people: aligned tables (text) or GitHub tables
// (markdown), with the same sections in the same order. One capture gets
// every section; several get one side-by-side comparison table.
#pragma once

#include <string>
#include <vector>

#include "report/run_report.h"

namespace gpuq::report {

/// Every section of one run.
std::string RenderRunText(const RunReport& run, bool markdown);

/// One column per run, in the order given, ending with the classification
/// and verdict rows.
std::string RenderComparisonText(const std::vector<RunReport>& runs,
                                 bool markdown);

/// RenderRunText for one run, RenderComparisonText for several.
std::string RenderText(const std::vector<RunReport>& runs, bool markdown);

}  // namespace gpuq::report
