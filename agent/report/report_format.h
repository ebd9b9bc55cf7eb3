// The output formats of `gpuq-agent report`.
#pragma once

#include <optional>
#include <string>

namespace gpuq::report {

/// text and markdown (render_text.h), json (render_json.h), html
/// (render_html.h), perfetto (render_perfetto.h).
enum class ReportFormat { kText, kMarkdown, kJson, kHtml, kPerfetto };

/// Parses "text", "markdown", "json", "html" or "perfetto".
std::optional<ReportFormat> ParseReportFormat(const std::string& name);

}  // namespace gpuq::report
