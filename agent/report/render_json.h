// RunReport -> JSON, schema "gpuq-report/1" (docs/report.md lists every
// field and its unit). Always {"schema": ..., "runs": [...]}, one element per
// capture in the order given.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/run_report.h"

namespace gpuq::report {

inline constexpr const char* kReportSchema = "gpuq-report/1";

nlohmann::ordered_json RunJson(const RunReport& run);
std::string RenderJson(const std::vector<RunReport>& runs);

}  // namespace gpuq::report
