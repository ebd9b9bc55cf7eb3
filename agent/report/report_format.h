// The output formats of `gpuq-agent report`.
#pragma once

#include <optional>
#include <string>

namespace gpuq::report {

/// text and markdown (render_text.h), json (render_json.h). The HTML and
/// Perfetto outputs are added next to these.
enum class ReportFormat { kText, kMarkdown, kJson };

/// Parses "text", "markdown" or "json".
std::optional<ReportFormat> ParseReportFormat(const std::string& name);

}  // namespace gpuq::report
