#include "report/render_html.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>

#include "common/text_table.h"
#include "model/container_rows.h"
#include "report/comparison.h"
#include "report/headline.h"
#include "report/report_tables.h"
#include "report/svg_chart.h"

namespace gpuq::report {
namespace {

using svg::Escape;
using svg::FormatNumber;
using svg::FormatSeconds;

// Everything the page needs to look right, inline: no font, image or
// stylesheet is fetched from anywhere.
constexpr const char* kStyle = R"css(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#1b1f24;background:#f4f5f7;margin:0}
main{max-width:1240px;margin:0 auto;padding:16px 24px 48px;overflow-wrap:anywhere}
h1{font-size:26px;margin:8px 0 4px}
h2{font-size:21px;margin:28px 0 8px;padding-top:12px;border-top:3px solid #0072B2}
h3{font-size:16px;margin:22px 0 6px}
nav a{margin-right:14px}
.meta{color:#57606a;margin:2px 0 10px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:8px;margin:10px 0}
.card{background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:8px 10px}
.card .v{font-size:20px;font-weight:600}
.card .k{color:#57606a;font-size:12px}
.card .s{color:#57606a;font-size:12px}
.verdict{background:#fff;border-left:6px solid #009E73;padding:8px 12px;margin:10px 0;font-size:15px}
.verdict.kMoreThanGpus{border-left-color:#D55E00}
.verdict.kOnePerGpu{border-left-color:#E69F00}
.verdict.kNone{border-left-color:#7F7F7F}
table{border-collapse:collapse;background:#fff;margin:6px 0 12px;font-size:12.5px}
th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#eaeef2}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.scroll{overflow-x:auto;max-width:100%}
#comparison-table td:first-child{white-space:nowrap}
td,th{overflow-wrap:normal}
figure.chart{margin:8px 0 14px;background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:4px}
figure.chart-empty{padding:8px 12px}
figure.chart-empty figcaption{font-weight:600}
p.empty,p.none{color:#57606a;font-style:italic;margin:4px 0}
svg.chart-svg{display:block;width:100%;height:auto;font:12px system-ui,"DejaVu Sans",sans-serif;fill:#1b1f24}
svg .bg{fill:#fff}
svg .chart-title{font-size:15px;font-weight:600}
svg text.on-bar{fill:#fff;stroke:#1b1f24;stroke-width:2px;stroke-linejoin:round;paint-order:stroke}
svg .panel-title{font-weight:600}
svg .axis-label{fill:#57606a}
svg .axis{stroke:#57606a;stroke-width:1}
svg .tick{stroke:#57606a}
svg .grid{stroke:#e4e7eb}
svg path.series{fill:none;stroke-width:2.2;stroke-opacity:.85;stroke-linejoin:round}
svg circle{fill-opacity:.85;stroke:#fff;stroke-width:.8}
svg .reference{stroke:#D55E00;stroke-dasharray:6 4}
svg .reference-label{fill:#D55E00}
svg .band{fill:#fafbfc}
svg .band-odd{fill:#f0f2f5}
svg .bar{stroke:#1b1f24;stroke-width:.5}
svg .bar.open{fill-opacity:.45;stroke-dasharray:4 2;stroke-width:1.2}
footer{color:#57606a;margin-top:32px;font-size:12px}
)css";

// The timeline step for titles: "1 s", "0.5 s", "100 ms".
std::string StepText(double s) {
  return s >= 0.1 ? fmt::format("{:g} s", s) : FormatSeconds(s);
}

std::string UtcTime(uint64_t ns) {
  if (ns == 0) return "unknown";
  const auto t = static_cast<std::time_t>(ns / 1000000000ULL);
  return fmt::format("{:%Y-%m-%d %H:%M:%S} UTC", fmt::gmtime(t));
}

// A table from raw cell texts (escaped here, so no caller can forget);
// columns whose header starts with '#' are numeric (right-aligned).
struct Table {
  std::vector<std::string> head;
  std::vector<std::vector<std::string>> rows;
};

std::string RenderTable(const Table& t, const std::string& id,
                        const std::string& empty) {
  if (t.rows.empty() && empty.empty()) return "";  // a chart said it
  if (t.rows.empty()) {
    return fmt::format("<p class=\"none\" id=\"{}\">{}</p>\n", Escape(id),
                       Escape(empty));
  }
  std::vector<bool> numeric;
  std::string out = fmt::format(
      "<div class=\"scroll\"><table id=\"{}\"><thead><tr>", Escape(id));
  for (const auto& h : t.head) {
    const bool n = !h.empty() && h[0] == '#';
    numeric.push_back(n);
    out += fmt::format("<th{}>{}</th>", n ? " class=\"n\"" : "",
                       Escape(n ? h.substr(1) : h));
  }
  out += "</tr></thead><tbody>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (size_t i = 0; i < row.size(); ++i) {
      const bool n = i < numeric.size() && numeric[i];
      out +=
          fmt::format("<td{}>{}</td>", n ? " class=\"n\"" : "", Escape(row[i]));
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
  return out;
}

std::string HtmlTableSection(const ReportTable* t, const std::string& prefix) {
  // No rows and nothing to say: a chart above said it.
  if (t == nullptr || (t->rows.empty() && *t->html_empty == '\0')) return "";
  const std::vector<size_t> shown = ShownColumns(*t, &ReportColumn::html);
  if (shown.empty()) return "";  // not an HTML table
  Table table;
  for (size_t i : shown) {
    const ReportColumn& c = t->columns[i];
    table.head.push_back((c.numeric ? "#" : "") + std::string(c.html));
  }
  for (const auto& row : t->rows) {
    std::vector<std::string> cells;
    for (size_t i : shown) cells.push_back(row.at(i).text);
    table.rows.push_back(std::move(cells));
  }
  return fmt::format("<h3>{}</h3>\n", Escape(t->html_title)) +
         RenderTable(table, prefix + t->html_id, t->html_empty);
}

const char* ClassKey(QueueClass c) {
  switch (c) {
    case QueueClass::kNone:
      return "kNone";
    case QueueClass::kSingleQueue:
      return "kSingleQueue";
    case QueueClass::kOnePerGpu:
      return "kOnePerGpu";
    case QueueClass::kMoreThanGpus:
      return "kMoreThanGpus";
  }
  return "kNone";
}

std::string Card(const std::string& key, const std::string& value,
                 const std::string& sub = "") {
  return fmt::format(
      "<div class=\"card\"><div class=\"k\">{}</div><div class=\"v\">{}</div>"
      "{}</div>",
      Escape(key), Escape(value),
      sub.empty() ? "" : fmt::format("<div class=\"s\">{}</div>", Escape(sub)));
}

std::string HeadlineCards(const RunReport& r) {
  std::string out = "<div class=\"cards\">";
  for (const HeadlineFigure& f : report::Headline(r)) {
    for (const HeadlineCard& c : f.cards) out += Card(c.title, c.value, c.sub);
  }
  out += "</div>\n";
  out += fmt::format(
      "<div class=\"verdict {}\">Queue pattern of the run: <b>{}</b> &mdash; "
      "{}</div>\n",
      ClassKey(r.classification), Escape(QueueClassName(r.classification)),
      Escape(QueueClassVerdict(r.classification)));
  return out;
}

std::string QueuesChart(const RunReport& r, size_t i) {
  svg::XyChart c;
  c.id = ChartId(i, kChartQueues);
  c.title = "Hardware queues per GPU (live at the end of each " +
            StepText(r.timeline.step_s) + " step)";
  c.y_label = "live queues";
  c.empty_message = "No hardware queue in this run.";
  c.panels = r.timeline.queues_per_gpu.size() > 1;
  c.x_max = r.duration_s;
  const double step = r.timeline.step_s;
  for (const auto& s : r.timeline.queues_per_gpu) {
    svg::XySeries xs;
    double peak = 0;
    for (size_t k = 0; k < s.size(); ++k) {
      xs.points.push_back(
          {std::min(step * static_cast<double>(k + 1), r.duration_s), s.at(k)});
      peak = std::max(peak, s.at(k));
    }
    xs.name = fmt::format("{} (peak {})", s.name, FormatNumber(peak));
    if (peak > 0) c.series.push_back(std::move(xs));
  }
  return svg::RenderXyChart(c);
}

std::string SubmissionsChart(const RunReport& r, size_t i) {
  svg::XyChart c;
  c.id = ChartId(i, kChartSubmissions);
  c.title = "Submission rate per container (AQL packets/s, per " +
            StepText(r.timeline.step_s) + " step)";
  c.y_label = "packets/s";
  c.empty_message =
      "No submissions sampled in this run (no ROCr queue was readable).";
  c.x_max = r.duration_s;
  const double step = r.timeline.step_s;
  for (const auto& s : r.timeline.submission_rate_per_container) {
    svg::XySeries xs;
    double peak = 0;
    for (size_t k = 0; k < s.size(); ++k) {
      xs.points.push_back({step * static_cast<double>(k), s.at(k)});
      peak = std::max(peak, s.at(k));
    }
    if (s.size() > 0) {  // the last step's rate holds to its end
      xs.points.push_back(
          {std::min(step * static_cast<double>(s.size()), r.duration_s),
           s.at(s.size() - 1)});
    }
    xs.name = fmt::format("{} (peak {}/s)", ContainerOrHost(s.name),
                          FormatNumber(std::round(peak)));
    if (peak > 0) c.series.push_back(std::move(xs));
  }
  return svg::RenderXyChart(c);
}

constexpr size_t kMaxUnmapMarkers = 4000;

std::string UnmapChart(const RunReport& r, size_t i) {
  svg::XyChart c;
  c.id = ChartId(i, kChartUnmaps);
  c.title =
      "Runlist unmap (preemption) durations: HWS unmaps and MES removals, log "
      "scale";
  c.y_label = "unmap duration";
  c.x_label = "when the unmap began (s since capture start)";
  c.empty_message = "No runlist unmap in this run.";
  c.x_max = r.duration_s;
  c.style = svg::Style::kMarkers;
  c.y_scale = svg::YScale::kLog;
  c.y_unit = svg::YUnit::kSeconds;
  // A long HWS run unmaps on every queue create and destroy: beyond
  // kMaxUnmapMarkers dots the page gets slow, so then the slowest ones are
  // all drawn (the tail is what matters) and an even sample of the rest.
  std::vector<const Slice*> unmaps;
  for (const auto& s : r.timeline.runlist_ops) {
    if (IsUnmap(s)) unmaps.push_back(&s);
  }
  std::vector<const Slice*> drawn = unmaps;
  if (unmaps.size() > kMaxUnmapMarkers) {
    std::stable_sort(drawn.begin(), drawn.end(),
                     [](const Slice* a, const Slice* b) {
                       return a->duration_s > b->duration_s;
                     });
    const size_t slowest = kMaxUnmapMarkers / 4;
    const size_t every =
        (drawn.size() - slowest + (kMaxUnmapMarkers - slowest) - 1) /
        (kMaxUnmapMarkers - slowest);
    std::vector<const Slice*> kept(drawn.begin(), drawn.begin() + slowest);
    for (size_t k = slowest; k < drawn.size(); k += every) {
      kept.push_back(drawn[k]);
    }
    c.title += fmt::format(
        " (showing {} of {}: the {} slowest and every {}th of the rest)",
        kept.size(), unmaps.size(), slowest, every);
    drawn = std::move(kept);
  }
  std::map<std::string, size_t> count;
  for (const Slice* s : unmaps) ++count[s->track];
  std::map<std::string, svg::XySeries> per_track;
  for (const Slice* s : drawn) {
    per_track[s->track].points.push_back({s->start_s, s->duration_s});
  }
  for (auto& [track, xs] : per_track) {
    const size_t n = count[track];
    xs.name = fmt::format("{} ({} unmap{})", track, n, n == 1 ? "" : "s");
    c.series.push_back(std::move(xs));
  }
  if (!c.series.empty()) {
    c.references.push_back({9.0, "amdkfd preemption timeout (9 s)"});
  }
  return svg::RenderXyChart(c);
}

// The preemption designers' question, drawn: whose queues the scheduler
// took off each GPU, when, and for how long (the windows behind
// gpuq_queue_preempted_seconds_total), one row per GPU and container, and
// a row per HWS GPU for the windows its runlist was oversubscribed (those
// behind gpuq_runlist_oversubscribed_seconds_total). A burst of unmaps
// makes thousands of windows: the longest of each kind are drawn.
constexpr size_t kMaxOffGpuBars = 1000;

// The kMaxOffGpuBars longest of `slices` (all when fewer); `*total` is set
// to how many there were.
std::vector<const Slice*> LongestWindows(const std::vector<Slice>& slices,
                                         size_t* total) {
  std::vector<const Slice*> windows;
  for (const Slice& s : slices) windows.push_back(&s);
  *total = windows.size();
  if (windows.size() > kMaxOffGpuBars) {
    std::partial_sort(windows.begin(), windows.begin() + kMaxOffGpuBars,
                      windows.end(), [](const Slice* a, const Slice* b) {
                        return a->duration_s > b->duration_s;
                      });
    windows.resize(kMaxOffGpuBars);
  }
  return windows;
}

std::string SliceArg(const Slice& s, const char* key) {
  auto it = s.args.find(key);
  return it == s.args.end() ? std::string() : it->second;
}

// A Gantt chart of run `i` over the run's whole duration.
svg::GanttChart RunGantt(const RunReport& r, size_t i, const char* chart,
                         std::string title, std::string empty_message) {
  svg::GanttChart c;
  c.id = ChartId(i, chart);
  c.title = std::move(title);
  c.empty_message = std::move(empty_message);
  c.x_max = r.duration_s;
  return c;
}

std::string OffGpuChart(const RunReport& r, size_t i) {
  svg::GanttChart c =
      RunGantt(r, i, kChartOffGpu,
               "Queues off the GPU after a preemption, per GPU and container",
               "No queue was taken off a GPU by a preemption in this run.");
  size_t total = 0;
  const std::vector<const Slice*> windows =
      LongestWindows(r.timeline.off_gpu, &total);
  if (windows.size() < total) {
    c.title +=
        fmt::format(" (the {} longest of {} windows)", kMaxOffGpuBars, total);
  }
  for (const Slice* s : windows) {
    svg::Bar b;
    b.row = fmt::format("{}: {}", s->track, SliceArg(*s, "container"));
    b.start = s->start_s;
    b.duration = s->duration_s;
    // Whose operation took them off: its own, another container's (named),
    // or no process's (a reset, suspend: no name).
    const std::string by = SliceArg(*s, "caused_by_container");
    b.label = FormatSeconds(s->duration_s);
    if (SliceArg(*s, "caused_by") == "self") {
      b.label += " (its own)";
    } else if (!by.empty()) {
      b.label += fmt::format(" (by {})", by);
    }
    b.tooltip = fmt::format("{} on {}: at {:.3f} s for {}", s->name, s->track,
                            s->start_s, FormatSeconds(s->duration_s));
    for (const auto& [k, v] : s->args)
      b.tooltip += fmt::format("\n{}: {}", k, v);
    c.bars.push_back(std::move(b));
  }
  const std::vector<const Slice*> oversubscribed =
      LongestWindows(r.timeline.oversubscribed, &total);
  if (!oversubscribed.empty()) {
    c.title += oversubscribed.size() < total
                   ? fmt::format(
                         ", and the {} longest of {} windows a "
                         "runlist was oversubscribed",
                         kMaxOffGpuBars, total)
                   : std::string(", and when a runlist was oversubscribed");
  }
  for (const Slice* s : oversubscribed) {
    svg::Bar b;
    b.row = fmt::format("{}: runlist oversubscribed", s->track);
    b.start = s->start_s;
    b.duration = s->duration_s;
    b.open = SliceArg(*s, "end") == "open";
    // "oversubscribed: compute_queues 3/2" -> "compute_queues 3/2, 1.20 s"
    const size_t colon = s->name.find(": ");
    b.label = fmt::format(
        "{}, {}",
        colon == std::string::npos ? s->name : s->name.substr(colon + 2),
        FormatSeconds(s->duration_s));
    b.tooltip = fmt::format("{} on {}: at {:.3f} s for {}{}", s->name, s->track,
                            s->start_s, FormatSeconds(s->duration_s),
                            b.open ? " (still at the capture's end)" : "");
    c.bars.push_back(std::move(b));
  }
  return svg::RenderGantt(c);
}

// How an eviction slice that was never restored ended ("" if restored):
// the analysis marks it with args "end" = "open" or "process_exit".
std::string NotRestored(const Slice& s) {
  const std::string end = SliceArg(s, "end");
  if (end.empty()) return "";
  return end == "process_exit" ? " (process exited, not restored)"
                               : " (not restored)";
}

std::string EvictionChart(const RunReport& r, size_t i) {
  svg::GanttChart c = RunGantt(r, i, kChartEvictions,
                               "Evictions per GPU (from eviction to restore)",
                               "No eviction in this run.");
  for (const auto& s : r.timeline.evictions) {
    svg::Bar b;
    b.row = s.track;
    b.start = s.start_s;
    b.duration = s.duration_s;
    const std::string open = NotRestored(s);
    b.open = !open.empty();
    auto container = s.args.find("container");
    b.label =
        fmt::format("{}{}, {}{}", s.name,
                    container == s.args.end() ? "" : ", " + container->second,
                    FormatSeconds(s.duration_s), open);
    b.tooltip = fmt::format("{} on {}: at {:.3f} s for {}{}", s.name, s.track,
                            s.start_s, FormatSeconds(s.duration_s), open);
    for (const auto& [k, v] : s.args)
      b.tooltip += fmt::format("\n{}: {}", k, v);
    c.bars.push_back(std::move(b));
  }
  return svg::RenderGantt(c);
}

std::string RunSection(const RunReport& r, const std::string& name, size_t i) {
  const std::string p = fmt::format("run{}-", i);
  std::string out = fmt::format(
      "<section class=\"run\" id=\"run-{}\">\n<h2>Run: {}</h2>\n"
      "<p class=\"meta\">{}: started {}, {} long, {} records, {} GPUs in the "
      "topology</p>\n",
      i, Escape(name), Escape(r.name), Escape(UtcTime(r.start_realtime_ns)),
      Escape(FormatSeconds(r.duration_s)), r.records, r.gpus_in_topology);
  out += HeadlineCards(r);
  if (r.timeline.slices_omitted > 0) {
    out += fmt::format(
        "<p class=\"meta\">{} slices (queue lifetimes, runlist operations or "
        "evictions) beyond the timeline's limit are not drawn; every figure "
        "and table still counts them.</p>\n",
        r.timeline.slices_omitted);
  }

  WalkLayout(
      kHtmlLayout, r,
      [&](const ReportTable* t) { out += HtmlTableSection(t, p); },
      [&](OwnSection own) {
        switch (own) {
          case OwnSection::kQueuesChart:
            out += "<h3>Hardware queues</h3>\n" + QueuesChart(r, i);
            break;
          case OwnSection::kSubmissionsChart:
            out += "<h3>Submissions</h3>\n" + SubmissionsChart(r, i);
            break;
          case OwnSection::kRunlistCharts:
            out += "<h3>Runlist preemption</h3>\n" + UnmapChart(r, i) +
                   OffGpuChart(r, i);
            break;
          case OwnSection::kEvictionsChart:
            out += "<h3>Evictions</h3>\n" + EvictionChart(r, i);
            break;
          default:
            break;  // another output's
        }
      });
  out += "</section>\n";
  return out;
}

std::string Comparison(const std::vector<RunReport>& runs,
                       const std::vector<std::string>& names) {
  Table t;
  t.head.push_back("");
  for (const auto& n : names) t.head.push_back("#" + n);
  for (ComparisonRow& row : ComparisonRows(runs)) {
    std::vector<std::string> cells{std::move(row.what)};
    for (std::string& cell : row.cells) cells.push_back(std::move(cell));
    t.rows.push_back(std::move(cells));
  }
  return "<section id=\"comparison\">\n<h2>Comparison of the runs</h2>\n" +
         RenderTable(t, "comparison-table", "") + "</section>\n";
}

}  // namespace

std::string ChartId(size_t run, const char* chart) {
  return fmt::format("run{}-{}", run, chart);
}

std::string RenderHtml(const std::vector<RunReport>& runs) {
  // What headings and columns call each run: as the text report does.
  const std::vector<std::string> short_names = RunLabels(runs);
  std::string names;
  for (const auto& r : runs) names += (names.empty() ? "" : ", ") + r.name;
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, "
      "initial-scale=1\">\n";
  out += fmt::format("<title>gpuq-agent report: {}</title>\n", Escape(names));
  out += fmt::format("<style>{}</style>\n</head>\n<body>\n<main>\n", kStyle);
  out += "<h1>gpuq-agent report</h1>\n";
  out += fmt::format(
      "<p class=\"meta\">{} recorded run{}: hardware queues, submissions, "
      "runlist preemption and evictions. Hover a chart element for its "
      "values.</p>\n",
      runs.size(), runs.size() == 1 ? "" : "s");
  if (runs.size() > 1) {
    out += "<nav><a href=\"#comparison\">comparison</a>";
    for (size_t i = 0; i < runs.size(); ++i) {
      out +=
          fmt::format("<a href=\"#run-{}\">{}</a>", i, Escape(short_names[i]));
    }
    out += "</nav>\n" + Comparison(runs, short_names);
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    out += RunSection(runs[i], short_names[i], i);
  }
  out += fmt::format(
      "<footer>Generated by gpuq-agent {} from recorded captures; this file "
      "is self-contained (inline CSS and SVG, no script, no network "
      "access).</footer>\n</main>\n</body>\n</html>\n",
      Escape(GPUQ_VERSION));
  return out;
}

}  // namespace gpuq::report
