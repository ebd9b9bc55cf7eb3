// RunReport -> JSON, schema "gpuq-report/1" (docs/report.md lists every
// field and its unit). Always {"schema": ..., "runs": [...]}, one element per
// capture in the order given.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "report/run_report.h"

namespace gpuq::report {

inline constexpr const char* kReportSchema = "gpuq-report/1";

/// The report as JSON (docs/report.md), written to `out` member by member
/// and row by row (never held whole).
void WriteJson(const std::vector<RunReport>& runs, std::ostream& out);
/// The same as one string (tests).
std::string RenderJson(const std::vector<RunReport>& runs);

}  // namespace gpuq::report
