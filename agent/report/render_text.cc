#include "report/render_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>

#include "common/text_table.h"
#include "model/container_rows.h"
#include "report/comparison.h"
#include "report/report_format.h"
#include "report/report_tables.h"

namespace gpuq::report {

std::optional<ReportFormat> ParseReportFormat(const std::string& name) {
  if (name == "text") return ReportFormat::kText;
  if (name == "markdown") return ReportFormat::kMarkdown;
  if (name == "json") return ReportFormat::kJson;
  if (name == "html") return ReportFormat::kHtml;
  if (name == "perfetto") return ReportFormat::kPerfetto;
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

std::string Emit(const TextTable& table, bool markdown) {
  if (table.empty()) return "(none)\n";
  return Rendered(table, markdown);
}

std::string Container(const Owner& o) { return ContainerOrHost(o.container); }
std::string N(uint64_t n) { return std::to_string(n); }
// "0", or "5 (unknown_queue 3, prog_skipped 2)": the reasons as
// gpuq_events_dropped_total labels them.
std::string DroppedText(const RunReport& r) {
  std::string text = N(r.events_dropped);
  const char* sep = " (";
  for (const auto& [reason, n] : r.events_dropped_by_reason) {
    text += fmt::format("{}{} {}", sep, reason, n);
    sep = ", ";
  }
  return r.events_dropped_by_reason.empty() ? text : text + ")";
}
std::string Utc(uint64_t realtime_ns) {
  const std::time_t t = static_cast<std::time_t>(realtime_ns / 1000000000ull);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
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
  return Section(t->text_title, md) + Emit(table, md);
}

}  // namespace

std::string RenderRunText(const RunReport& r, bool md) {
  ReportTablePlacement tables(r);
  std::string out =
      md ? "# gpuq report: " + r.name + "\n" : "gpuq report: " + r.name + "\n";

  out += Section("Summary", md);
  TextTable summary({"WHAT", "VALUE"});
  summary.Add({"capture started", Utc(r.start_realtime_ns)});
  summary.Add({"duration", fmt::format("{} s ({} records)",
                                       FixedSeconds(r.duration_s), r.records)});
  summary.Add({"GPUs", fmt::format("{} in topology, {} with queues",
                                   r.gpus_in_topology, r.gpus_used)});
  summary.Add({"containers, processes",
               fmt::format("{}, {}", r.containers.size(), r.processes.size())});
  summary.Add(
      {"hardware queues",
       fmt::format("peak {} (compute {}), at start {}, created {}, "
                   "destroyed {}, at end {}",
                   r.queues_peak, r.compute_peak, r.queues_at_start,
                   r.queues_created, r.queues_destroyed, r.queues_at_end)});
  summary.Add(
      {"submissions", fmt::format("{} (mean {}/s, peak {}/s)", r.submissions,
                                  FormatRate(r.submissions_mean_per_s),
                                  FormatRate(r.submissions_peak_per_s))});
  summary.Add({"unsampled queues peak", N(r.unsampled_peak)});
  summary.Add({"pending packets peak", N(r.pending_peak)});
  summary.Add({"doorbells", N(r.doorbells)});
  summary.Add({"runlist", fmt::format("{} unmaps, {} maps, {} failed", r.unmaps,
                                      r.maps, r.runlist_failures)});
  summary.Add(
      {"evictions", fmt::format("{} ({} restores, {} s evicted)", r.evictions,
                                r.restores, FixedSeconds(EvictedSeconds(r)))});
  summary.Add({"create failures", N(r.create_failures)});
  summary.Add({"process exits", N(r.process_exits)});
  summary.Add({"events dropped", DroppedText(r)});
  summary.Add({"classification", QueueClassName(r.classification)});
  summary.Add({"verdict", QueueClassVerdict(r.classification)});
  summary.Add({"compute queues only",
               fmt::format("{}: {}", QueueClassName(r.compute_classification),
                           QueueClassVerdict(r.compute_classification))});
  out += Rendered(summary, md);

  out += TextTableSection(tables.Take("containers"), md);
  out += TextTableSection(tables.Take("processes"), md);

  out += TextTableSection(tables.Take("gpu_queues"), md);

  out += Section("Submissions", md);
  out += fmt::format(
      "total {}, mean {}/s, peak {}/s ({:g} s buckets), pending peak {}\n{}",
      r.submissions, FormatRate(r.submissions_mean_per_s),
      FormatRate(r.submissions_peak_per_s), r.timeline.step_s, r.pending_peak,
      md ? "\n" : "");
  out += TextTableSection(tables.Take("gpu_submissions"), md);
  out += TextTableSection(tables.Take("queue_submissions"), md);
  // Where a container's submissions fall short: its live compute queues
  // the agent could not read (why: gpuq_unsampled_queues).
  out += "\n";
  TextTable unsampled({"CONTAINER", "UNSAMPLED_PEAK", "UNSAMPLED_AT_END"});
  for (const ContainerRow& c : r.containers) {
    const uint64_t at_end = c.at_end.Unsampled();
    if (c.unsampled_peak == 0 && at_end == 0) continue;
    unsampled.Add({Container(c.owner), N(c.unsampled_peak), N(at_end)});
  }
  out += unsampled.empty() ? "unsampled queues: none, the submissions are "
                             "complete\n"
                           : Rendered(unsampled, md);

  out += TextTableSection(tables.Take("runlist"), md);
  out += TextTableSection(tables.Take("oversubscription"), md);
  out += TextTableSection(tables.Take("preemptions"), md);
  out += TextTableSection(tables.Take("preempted_by"), md);
  out += TextTableSection(tables.Take("priorities"), md);

  out += TextTableSection(tables.Take("eviction_list"), md);

  out += TextTableSection(tables.Take("create_failure_list"), md);

  out += TextTableSection(tables.Take("classification_list"), md);
  for (const ReportTable* t : tables.Rest()) out += TextTableSection(t, md);
  return out;
}

std::string RenderComparisonText(const std::vector<RunReport>& runs, bool md) {
  std::vector<std::string> header = {""};
  for (const RunReport& r : runs) header.push_back(ShortName(r.name));
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
