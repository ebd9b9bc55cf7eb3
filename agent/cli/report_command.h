// `gpuq-agent report [LABEL=]CAPTURE... [-o FORMAT]`.
#pragma once

#include "cli/options.h"

namespace gpuq {

/// Analyzes every capture (report/run_analysis.h) and prints the report to
/// stdout. A capture that cannot be read: one line naming it, exit 1.
int RunReportCommand(const Options& options);

}  // namespace gpuq
