// The output formats of `gpuq-agent report`.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuq::report {

/// text and markdown (render_text.h), json (render_json.h), html
/// (render_html.h), perfetto (render_perfetto.h).
enum class ReportFormat { kText, kMarkdown, kJson, kHtml, kPerfetto };

/// Every format by its --output name, in the order --help lists them.
const std::vector<std::pair<std::string, ReportFormat>>& ReportFormats();

/// Parses a name of ReportFormats().
std::optional<ReportFormat> ParseReportFormat(const std::string& name);

}  // namespace gpuq::report
