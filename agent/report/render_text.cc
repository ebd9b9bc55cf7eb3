#include "report/render_text.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/text_table.h"
#include "model/container_rows.h"
#include "report/comparison.h"
#include "report/headline.h"
#include "report/report_format.h"
#include "report/report_tables.h"

namespace gpuq::report {

const std::vector<std::pair<std::string, ReportFormat>>& ReportFormats() {
  static const std::vector<std::pair<std::string, ReportFormat>> kFormats = {
      {"text", ReportFormat::kText},
      {"markdown", ReportFormat::kMarkdown},
      {"json", ReportFormat::kJson},
      {"html", ReportFormat::kHtml},
      {"perfetto", ReportFormat::kPerfetto}};
  return kFormats;
}

std::optional<ReportFormat> ParseReportFormat(const std::string& name) {
  for (const auto& [word, format] : ReportFormats()) {
    if (word == name) return format;
  }
  return std::nullopt;
}

namespace {

std::string Rendered(const TextTable& table, bool markdown) {
  return markdown ? table.RenderMarkdown() : table.Render();
}

std::string Section(const std::string& title, bool markdown) {
  if (markdown) return "\n## " + title + "\n\n";
  std::string upper = title;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  return "\n" + upper + "\n";
}

std::string TextTableSection(const ReportTable* t, bool md) {
  if (t == nullptr) return "";
  const std::vector<size_t> shown = ShownColumns(*t, &ReportColumn::text);
  if (shown.empty()) return "";  // not a text table
  if (t->rows.empty() && t->only_with_rows) return "";
  std::vector<std::string> header;
  for (size_t i : shown) header.emplace_back(t->columns[i].text);
  TextTable table(header);
  for (const auto& row : t->rows) {
    std::vector<std::string> cells;
    for (size_t i : shown) cells.push_back(row.at(i).text);
    table.Add(std::move(cells));
  }
  const std::string empty = t->text_empty != nullptr ? t->text_empty : "(none)";
  return Section(t->text_title, md) +
         (table.empty() ? empty + "\n" : Rendered(table, md));
}

}  // namespace

std::string RenderRunText(const RunReport& r, bool md) {
  std::string out =
      md ? "# gpuq report: " + r.name + "\n" : "gpuq report: " + r.name + "\n";
  WalkLayout(
      kTextLayout, r,
      [&](const ReportTable* t) { out += TextTableSection(t, md); },
      [&](OwnSection own) {
        switch (own) {
          case OwnSection::kHeadline: {
            out += Section("Summary", md);
            TextTable summary({"WHAT", "VALUE"});
            for (HeadlineFigure& f : Headline(r)) {
              if (!f.what.empty()) {
                summary.Add({std::move(f.what), std::move(f.text)});
              }
            }
            out += Rendered(summary, md);
            break;
          }
          case OwnSection::kSubmissionsLine:
            out += Section("Submissions", md);
            out += fmt::format(
                "total {}, mean {}/s, peak {}/s ({:g} s buckets), pending "
                "peak {}\n{}",
                r.submissions, FormatRate(r.submissions_mean_per_s),
                FormatRate(r.submissions_peak_per_s), r.timeline.step_s,
                r.pending_peak, md ? "\n" : "");
            break;
          default:
            break;  // another output's
        }
      });
  return out;
}

std::string RenderComparisonText(const std::vector<RunReport>& runs, bool md) {
  std::vector<std::string> header = {""};
  for (std::string& label : RunLabels(runs)) header.push_back(std::move(label));
  TextTable t(header);
  for (ComparisonRow& row : ComparisonRows(runs)) {
    std::vector<std::string> cells = {std::move(row.what)};
    for (std::string& cell : row.cells) cells.push_back(std::move(cell));
    t.Add(std::move(cells));
  }
  std::string out =
      md ? "# gpuq report: comparison\n\n" : "gpuq report: comparison\n\n";
  return out + Rendered(t, md);
}

std::string RenderText(const std::vector<RunReport>& runs, bool markdown) {
  if (runs.size() == 1) return RenderRunText(runs[0], markdown);
  return RenderComparisonText(runs, markdown);
}

}  // namespace gpuq::report
