// The visual report outputs (report/render_html.h, report/render_perfetto.h,
// report/svg_chart.h) on hand-built RunReports: escaping of hostile names,
// every chart present, "none in this run" for empty series, and the
// trace-event JSON's structure, counts and durations against the report.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "report/render_html.h"
#include "report/render_perfetto.h"
#include "report/svg_chart.h"

namespace gpuq::report {
namespace {

const char* const kHostile = "<script>alert(\"x&y\")</script>'q'";
const char* const kHostileComm = "\"><img src=x onerror=1>";

Slice MakeSlice(const std::string& track, const std::string& name, double start,
                double duration, std::map<std::string, std::string> args = {}) {
  Slice s;
  s.track = track;
  s.name = name;
  s.start_s = start;
  s.duration_s = duration;
  s.args = std::move(args);
  return s;
}

// Two GPUs, a container with a hostile name, a host process; unmaps (one of
// them a 9 s hang), maps, two evictions (one never restored) and queue
// lifetimes of which two overlap in one process.
RunReport SampleReport(const std::string& name = "run-a.gpuqcap") {
  RunReport r;
  r.name = name;
  r.start_realtime_ns = 1700000000000000000ULL;
  r.duration_s = 20;
  r.records = 194;
  r.gpus_in_topology = 2;
  r.gpus_used = 2;
  r.queues_peak = 4;
  r.queues_at_end = 2;
  r.queues_created = 5;
  r.queues_destroyed = 3;
  r.submissions = 12345;
  r.submissions_mean_per_s = 617.25;
  r.submissions_peak_per_s = 1500;
  r.unmaps = 3;
  r.maps = 2;
  r.evictions = 2;
  r.classification = QueueClass::kMoreThanGpus;

  ContainerRow c;
  c.owner = {kHostile, "pod&1", "ns<2>"};
  c.container_id = "0124dd351391c6c45121cf43714d956032a91aee4fa3fa9ed0cf6b58d6";
  c.processes = 1;
  c.queues_peak = 3;
  c.peak_per_gpu = {{11437, 2}, {23710, 1}};
  c.gpus_used = 2;
  c.classification = QueueClass::kMoreThanGpus;
  r.containers.push_back(c);
  ContainerRow host;
  host.classification = QueueClass::kSingleQueue;
  host.queues_peak = 1;
  r.containers.push_back(host);

  ProcessRow p;
  p.owner = c.owner;
  p.pid = 4242;
  p.comm = kHostileComm;
  p.queues_peak = 3;
  r.processes.push_back(p);

  GpuQueueRow g;
  g.gpu_id = 11437;
  g.gpu_name = "MI300X (gfx942)";
  g.queue_type = "compute";
  g.peak = 2;
  r.gpu_queues.push_back(g);

  RunlistRow rl;
  rl.gpu_id = 11437;
  rl.scheduler = "hws";
  rl.unmaps = 3;
  rl.unmap = {3, 9.0007, 0.00012, 0.00031, 9.0004, 9.0004, 9.0004};
  rl.failures = {{"unmap:ETIME", 1}};
  r.runlist.push_back(rl);

  EvictionRow e;
  e.owner = c.owner;
  e.pid = 4242;
  e.gpu_id = 11437;
  e.trigger = "ttm";
  e.start_s = 10;
  e.duration_s = 0.15;
  r.eviction_list.push_back(e);

  auto& t = r.timeline;
  t.step_s = 1;
  Series q1{"gpu 11437", std::vector<double>(20, 2)};
  q1.values[5] = 3;
  Series q2{"gpu 23710", std::vector<double>(20, 1)};
  t.queues_per_gpu = {q1, q2};
  t.submission_rate_per_container = {{kHostile, std::vector<double>(20, 600)},
                                     {"", std::vector<double>(20, 17.25)}};
  const std::string proc = std::string("pid 4242 (") + kHostileComm + ")";
  const auto lifetime = [&t](const std::string& track, uint32_t type,
                             uint32_t queue_id, uint32_t gpu_id, double start,
                             double duration) {
    QueueLifetime l;
    l.queue_id = queue_id;
    l.start_s = start;
    l.duration_s = duration;
    l.track = t.LifetimeTrack(track);
    t.AddLifetime(l, gpu_id, type, "ioctl");
  };
  lifetime(proc, GPUQ_QUEUE_COMPUTE, 0, 11437, 0.05, 19.95);
  lifetime(proc, GPUQ_QUEUE_COMPUTE, 1, 11437, 0.06, 5);
  lifetime(proc, GPUQ_QUEUE_COMPUTE, 1, 23710, 6, 14);
  lifetime("pid 7 (host)", GPUQ_QUEUE_SDMA, 0, 23710, 1, 2);
  t.runlist_ops = {
      MakeSlice("gpu 11437", "unmap (dynamic_queues)", 10, 0.00031,
                {{"cause", "evict"}}),
      MakeSlice("gpu 11437", "map", 10.001, 0.000095),
      MakeSlice("gpu 11437", "unmap (dynamic_queues)", 10.15, 0.00012),
      MakeSlice("gpu 23710", "unmap (all_queues)", 11, 9.000412345,
                {{"error", "ETIME"}}),
      MakeSlice("gpu 23710", "map", 20.0005, 0.0004),
      MakeSlice("gpu 47101", "mes remove (queue 2)", 14, 0.00006),
      MakeSlice("gpu 47101", "mes add (queue 2)", 14.05, 0.00015)};
  t.evictions = {
      MakeSlice("gpu 11437", "evicted: ttm", 10, 0.15, {{"container", "vllm"}}),
      MakeSlice("gpu 11437", "evicted: svm", 10.1, 9.9, {{"end", "open"}})};
  // The hostile container's queues off the GPU twice (a reset's unmap, its
  // own), the host's once (vllm's unmap).
  t.off_gpu = {MakeSlice("gpu 11437", "off GPU: x", 10, 0.00031,
                         {{"container", kHostile}, {"caused_by", "other"}}),
               MakeSlice("gpu 23710", "off GPU: x", 11, 9.000412345,
                         {{"container", kHostile}, {"caused_by", "self"}}),
               MakeSlice("gpu 11437", "off GPU: (host)", 10.15, 0.00012,
                         {{"container", "(host)"},
                          {"caused_by", "other"},
                          {"caused_by_container", "vllm"}})};
  return r;
}

// The <figure> element with id `id` (up to its end), "" if absent.
std::string Figure(const std::string& html, const std::string& id) {
  const auto at = html.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const auto start = html.rfind("<figure", at);
  const auto end = html.find("</figure>", at);
  if (start == std::string::npos || end == std::string::npos) return "";
  return html.substr(start, end - start);
}

TEST(SvgEscape, EscapesMarkupAndQuotes) {
  EXPECT_EQ(svg::Escape("<a href=\"x\">&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(svg::Escape("plain µs"), "plain µs");
}

TEST(SvgEscape, ReplacesInvalidUtf8AndControlCharacters) {
  EXPECT_EQ(svg::Escape(std::string("a\xff"
                                    "b\x01"
                                    "c")),
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD"
            "c");
  // A truncated multi-byte sequence and an overlong '<' are invalid too.
  EXPECT_EQ(svg::Escape(std::string("\xC3")), "\xEF\xBF\xBD");
  EXPECT_EQ(svg::Escape(std::string("\xC0\xBC")), "\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(SvgShorten, CutsAtCodePoints) {
  EXPECT_EQ(svg::Shorten("abc", 3), "abc");
  EXPECT_EQ(svg::Shorten("µµµµ", 2), "µµ…");
}

TEST(SvgFormat, SecondsAndNumbersCarryUnits) {
  EXPECT_EQ(svg::FormatSeconds(0.00031), "310 µs");
  EXPECT_EQ(svg::FormatSeconds(0.0021), "2.10 ms");
  EXPECT_EQ(svg::FormatSeconds(9.000412345), "9.00 s");
  EXPECT_EQ(svg::FormatNumber(4500), "4.5k");
  EXPECT_EQ(svg::FormatNumber(7.5), "7.5");
}

TEST(SvgChart, LogAxisTicksAreDecadesWithUnits) {
  svg::XyChart c;
  c.id = "t";
  c.title = "durations";
  c.x_max = 20;
  c.style = svg::Style::kMarkers;
  c.y_scale = svg::YScale::kLog;
  c.y_unit = svg::YUnit::kSeconds;
  c.series = {{"gpu 1", {{1, 0.00006}, {2, 9.0}}}};
  const std::string out = svg::RenderXyChart(c);
  for (const char* tick :
       {">10 µs<", ">100 µs<", ">1 ms<", ">1 s<", ">10 s<"}) {
    EXPECT_NE(out.find(tick), std::string::npos) << tick;
  }
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n') > 0, true);
  EXPECT_NE(out.find("<circle"), std::string::npos);
}

TEST(SvgChart, EmptyChartSaysSoInsteadOfDrawing) {
  svg::GanttChart g;
  g.id = "e";
  g.title = "Evictions";
  g.empty_message = "No eviction in this run.";
  const std::string out = svg::RenderGantt(g);
  EXPECT_NE(out.find("No eviction in this run."), std::string::npos);
  EXPECT_EQ(out.find("<svg"), std::string::npos);
}

// A bar across most of the plot has no room for its label on either side:
// it is written on the bar, never over the row labels left of the plot.
TEST(SvgChart, ALabelWithoutRoomBesideItsBarGoesOnIt) {
  svg::GanttChart g;
  g.id = "g";
  g.title = "off";
  g.x_max = 15;
  g.bars = {{"gpu 64512: vllm", 1, 12.8, "12.8 s (its own)", "", false},
            {"gpu 11437: vllm", 10, 0.003, "3.01 ms", "", false}};
  const std::string out = svg::RenderGantt(g);
  const size_t on_bar = out.find("<text class=\"on-bar\"");
  ASSERT_NE(on_bar, std::string::npos);
  EXPECT_NE(out.find(">12.8 s (its own)</text>", on_bar), std::string::npos);
  EXPECT_EQ(out.find("on-bar", on_bar + 20), std::string::npos);  // once
  EXPECT_NE(out.find(">3.01 ms</text>"), std::string::npos);  // beside its bar
}

TEST(RenderHtml, HostileNamesAreEscapedEverywhere) {
  const std::string html = RenderHtml({SampleReport(kHostile)});
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("alert(\""), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(&quot;x&amp;y&quot;)"),
            std::string::npos);
  EXPECT_NE(html.find("&quot;&gt;&lt;img src=x onerror=1&gt;"),
            std::string::npos);
  EXPECT_NE(html.find("pod&amp;1"), std::string::npos);
  EXPECT_NE(html.find("ns&lt;2&gt;"), std::string::npos);
}

TEST(RenderHtml, SelfContainedWithoutScriptOrNetworkReferences) {
  const std::string html = RenderHtml({SampleReport()});
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<meta charset=\"utf-8\">"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
}

TEST(RenderHtml, EveryChartIsDrawnWithItsTitle) {
  const std::string html = RenderHtml({SampleReport()});
  const std::map<const char*, const char*> titles = {
      {kChartQueues, "Hardware queues per GPU"},
      {kChartSubmissions, "Submission rate per container"},
      {kChartUnmaps, "Runlist unmap (preemption) durations"},
      {kChartEvictions, "Evictions per GPU"},
      {kChartOffGpu, "Queues off the GPU after a preemption"}};
  for (const auto& [chart, title] : titles) {
    const std::string fig = Figure(html, ChartId(0, chart));
    ASSERT_FALSE(fig.empty()) << chart;
    EXPECT_NE(fig.find("<svg"), std::string::npos) << chart;
    EXPECT_NE(fig.find(title), std::string::npos) << chart;
    EXPECT_EQ(fig.find("chart-empty"), std::string::npos) << chart;
  }
  // One legend entry per series, one marker per unmap, one bar per eviction.
  const std::string queues = Figure(html, ChartId(0, kChartQueues));
  EXPECT_NE(queues.find("gpu 11437 (peak 3)"), std::string::npos);
  EXPECT_NE(queues.find("gpu 23710 (peak 1)"), std::string::npos);
  const std::string unmaps = Figure(html, ChartId(0, kChartUnmaps));
  size_t circles = 0;
  for (size_t at = unmaps.find("<circle"); at != std::string::npos;
       at = unmaps.find("<circle", at + 1)) {
    ++circles;
  }
  EXPECT_EQ(circles, 4u);  // unmaps and MES removals, not maps or adds
  EXPECT_NE(unmaps.find("gpu 47101 (1 unmap)"), std::string::npos);
  EXPECT_NE(unmaps.find("amdkfd preemption timeout (9 s)"), std::string::npos);
  const std::string ev = Figure(html, ChartId(0, kChartEvictions));
  EXPECT_NE(ev.find("class=\"bar\""), std::string::npos);
  EXPECT_NE(ev.find("class=\"bar open\""), std::string::npos);
  EXPECT_NE(ev.find("(not restored)"), std::string::npos);
  EXPECT_NE(ev.find("evicted: ttm, vllm, 150 ms"), std::string::npos);
  // One row per GPU and container, one bar per window, whose own unmap said.
  const std::string off = Figure(html, ChartId(0, kChartOffGpu));
  size_t bars = 0;
  for (size_t at = off.find("class=\"bar\""); at != std::string::npos;
       at = off.find("class=\"bar\"", at + 1)) {
    ++bars;
  }
  EXPECT_EQ(bars, 3u);
  EXPECT_NE(off.find("gpu 11437: (host)"), std::string::npos);
  EXPECT_NE(off.find("9.00 s (its own)"), std::string::npos);
  EXPECT_NE(off.find("120 µs (by vllm)"), std::string::npos) << off;
  EXPECT_EQ(off.find("310 µs ("), std::string::npos) << off;  // no process
  EXPECT_EQ(off.find(kHostile), std::string::npos);  // escaped when drawn
  // Headline and tables.
  EXPECT_NE(html.find("more queues than GPUs"), std::string::npos);
  EXPECT_NE(html.find("needs selective preemption"), std::string::npos);
  EXPECT_NE(html.find("design fits"), std::string::npos);  // the host row
  EXPECT_NE(html.find("id=\"run0-runlist\""), std::string::npos);
  EXPECT_NE(html.find("unmap:ETIME=1"), std::string::npos);
  EXPECT_NE(html.find("9.00 s"), std::string::npos);  // p99 of the hang
  EXPECT_EQ(html.find("id=\"comparison\""), std::string::npos);
}

TEST(RenderHtml, EmptySeriesSayNoneInThisRun) {
  RunReport r = SampleReport();
  r.timeline.evictions.clear();
  r.timeline.runlist_ops.clear();
  r.timeline.submission_rate_per_container.clear();
  r.timeline.queues_per_gpu.clear();
  r.eviction_list.clear();
  r.runlist.clear();
  r.timeline.off_gpu.clear();
  const std::string html = RenderHtml({r});
  for (const char* chart : {kChartQueues, kChartSubmissions, kChartUnmaps,
                            kChartEvictions, kChartOffGpu}) {
    const std::string fig = Figure(html, ChartId(0, chart));
    ASSERT_FALSE(fig.empty()) << chart;
    EXPECT_NE(fig.find("chart-empty"), std::string::npos) << chart;
    EXPECT_NE(fig.find("in this run"), std::string::npos) << chart;
    EXPECT_EQ(fig.find("<svg"), std::string::npos) << chart;
  }
  EXPECT_NE(html.find("No eviction in this run."), std::string::npos);
  EXPECT_NE(html.find("No queue was taken off a GPU by a preemption"),
            std::string::npos);
  EXPECT_NE(html.find("No runlist unmap in this run."), std::string::npos);
  EXPECT_NE(html.find("No queue creation failed in this run."),
            std::string::npos);
}

TEST(RenderHtml, SeveralRunsGetSectionsAndAComparison) {
  RunReport b = SampleReport("run-b.gpuqcap");
  b.queues_peak = 77;
  const std::string html = RenderHtml({SampleReport(), b});
  EXPECT_NE(html.find("id=\"comparison-table\""), std::string::npos);
  EXPECT_NE(html.find("id=\"run-0\""), std::string::npos);
  EXPECT_NE(html.find("id=\"run-1\""), std::string::npos);
  EXPECT_FALSE(Figure(html, ChartId(1, kChartUnmaps)).empty());
  const auto table = html.find("id=\"comparison-table\"");
  EXPECT_NE(html.find(">77<", table), std::string::npos);
  EXPECT_LT(html.find(">77<", table), html.find("id=\"run-0\""));
}

TEST(RenderHtml, ManyOffGpuWindowsDrawTheLongest) {
  RunReport r = SampleReport();
  r.timeline.off_gpu.clear();
  for (int k = 0; k < 5000; ++k) {
    r.timeline.off_gpu.push_back(
        MakeSlice("gpu 11437", "off GPU: a", k * 0.003, 1e-4 + k * 1e-9,
                  {{"container", "a"}, {"caused_by", "other"}}));
  }
  r.timeline.off_gpu.push_back(
      MakeSlice("gpu 23710", "off GPU: b", 5, 9.5, {{"container", "b"}}));
  const std::string fig = Figure(RenderHtml({r}), ChartId(0, kChartOffGpu));
  size_t bars = 0;
  for (size_t at = fig.find("<rect class=\"bar"); at != std::string::npos;
       at = fig.find("<rect class=\"bar", at + 1)) {
    ++bars;
  }
  EXPECT_EQ(bars, 1000u);
  EXPECT_NE(fig.find("the 1000 longest of 5001 windows"), std::string::npos);
  EXPECT_NE(fig.find("gpu 23710: b"), std::string::npos);  // the longest
}

TEST(RenderHtml, OversubscribedRunlistsAreARowPerGpuUnderTheVictims) {
  RunReport r = SampleReport();
  const std::string before = Figure(RenderHtml({r}), ChartId(0, kChartOffGpu));
  EXPECT_EQ(before.find("runlist oversubscribed"), std::string::npos);
  r.timeline.oversubscribed = {
      MakeSlice("gpu 11437", "oversubscribed: compute_queues 3/2", 1, 4,
                {{"compute_queues", "3/2"}}),
      MakeSlice("gpu 11437", "oversubscribed: processes 3/2", 6, 2,
                {{"processes", "3/2"}, {"end", "open"}})};
  const std::string fig = Figure(RenderHtml({r}), ChartId(0, kChartOffGpu));
  EXPECT_NE(fig.find("and when a runlist was oversubscribed"),
            std::string::npos);
  EXPECT_NE(fig.find("gpu 11437: runlist oversubscribed"), std::string::npos);
  EXPECT_NE(fig.find("compute_queues 3/2, 4.00 s"), std::string::npos) << fig;
  // The window still open at the end is hatched, and says so.
  EXPECT_NE(fig.find("class=\"bar open\""), std::string::npos);
  EXPECT_NE(fig.find("still at the capture&#39;s end"), std::string::npos)
      << fig;
  // The victims' bars are still there.
  EXPECT_NE(fig.find("gpu 11437: (host)"), std::string::npos);
  // With only oversubscribed windows the chart is not empty.
  r.timeline.off_gpu.clear();
  const std::string only = Figure(RenderHtml({r}), ChartId(0, kChartOffGpu));
  EXPECT_EQ(only.find("chart-empty"), std::string::npos);
}

TEST(RenderHtml, ManyUnmapsDrawTheSlowestAndASample) {
  RunReport r = SampleReport();
  r.timeline.runlist_ops.clear();
  for (int k = 0; k < 30000; ++k) {
    r.timeline.runlist_ops.push_back(MakeSlice(
        "gpu 11437", "unmap (dynamic_queues)", k * 0.0006, 1e-4 + k * 1e-9));
  }
  r.timeline.runlist_ops.push_back(
      MakeSlice("gpu 23710", "unmap (all_queues)", 5, 9.0004));
  const std::string fig = Figure(RenderHtml({r}), ChartId(0, kChartUnmaps));
  size_t circles = 0;
  for (size_t at = fig.find("<circle"); at != std::string::npos;
       at = fig.find("<circle", at + 1)) {
    ++circles;
  }
  EXPECT_LE(circles, 4000u);
  EXPECT_GE(circles, 3900u);
  EXPECT_NE(fig.find("of 30001: the 1000 slowest"), std::string::npos);
  EXPECT_NE(fig.find("gpu 11437 (30000 unmaps)"), std::string::npos);
  EXPECT_NE(fig.find("gpu 23710 (1 unmap)"), std::string::npos);
  EXPECT_NE(fig.find("9.00 s"), std::string::npos);  // the hang is drawn
}

// ---- Perfetto ----

using Json = nlohmann::json;

Json Parse(const std::vector<RunReport>& runs) {
  return Json::parse(RenderPerfetto(runs));
}

TEST(RenderPerfetto, EveryEventHasTheFieldsOfItsPhase) {
  const Json doc = Parse({SampleReport()});
  ASSERT_TRUE(doc.contains("traceEvents"));
  EXPECT_EQ(doc["displayTimeUnit"], "ms");
  ASSERT_TRUE(doc["traceEvents"].is_array());
  std::map<std::string, size_t> phases;
  for (const auto& e : doc["traceEvents"]) {
    for (const char* field : {"name", "ph", "ts", "pid", "tid"}) {
      ASSERT_TRUE(e.contains(field)) << field << " in " << e.dump();
    }
    EXPECT_TRUE(e["ts"].is_number());
    EXPECT_TRUE(e["pid"].is_number_integer());
    EXPECT_TRUE(e["tid"].is_number_integer());
    const std::string ph = e["ph"];
    ++phases[ph];
    if (ph == "X") {
      ASSERT_TRUE(e.contains("dur"));
      EXPECT_GE(e["dur"].get<double>(), 0);
    }
    if (ph == "C" || ph == "M") {
      ASSERT_TRUE(e.contains("args"));
      EXPECT_TRUE(e["args"].is_object());
      EXPECT_FALSE(e["args"].empty());
    }
  }
  EXPECT_EQ(phases.size(), 3u);  // M, X, C only
  EXPECT_GT(phases["M"], 0u);
}

TEST(RenderPerfetto, SlicesAndCountersEqualTheReport) {
  const RunReport r = SampleReport();
  const Json doc = Parse({r});
  std::map<std::string, std::vector<std::pair<double, double>>> by_cat;
  size_t queue_counters = 0, rate_counters = 0;
  double counter_sum = 0;
  std::map<int, std::string> process_names;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X") {
      by_cat[e["cat"]].emplace_back(e["ts"].get<double>(),
                                    e["dur"].get<double>());
    } else if (e["ph"] == "C") {
      if (e["name"] == "live queues") {
        ++queue_counters;
        counter_sum += e["args"]["queues"].get<double>();
      } else {
        ++rate_counters;
      }
    } else if (e["name"] == "process_name") {
      process_names[e["pid"]] = e["args"]["name"];
    }
  }
  auto expect_same = [](const std::vector<Slice>& slices,
                        std::vector<std::pair<double, double>> got) {
    std::vector<std::pair<double, double>> want;
    for (const auto& s : slices) {
      want.emplace_back(s.start_s * 1e6, s.duration_s * 1e6);
    }
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_DOUBLE_EQ(got[i].first, want[i].first);
      EXPECT_DOUBLE_EQ(got[i].second, want[i].second);
    }
  };
  expect_same(r.timeline.runlist_ops, by_cat["runlist"]);
  expect_same(r.timeline.evictions, by_cat["eviction"]);
  std::vector<Slice> lifetimes;
  for (const QueueLifetime& l : r.timeline.queue_lifetimes) {
    lifetimes.push_back(r.timeline.LifetimeSlice(l));
  }
  expect_same(lifetimes, by_cat["queue"]);
  expect_same(r.timeline.off_gpu, by_cat["preemption"]);
  EXPECT_EQ(by_cat.size(), 4u);
  EXPECT_EQ(queue_counters, 40u);  // 2 GPUs x 20 steps
  EXPECT_DOUBLE_EQ(counter_sum, 2 * 20 + 1 + 20);
  EXPECT_EQ(rate_counters, 40u);  // 2 containers x 20 steps
  // Processes: 3 GPUs, 2 OS processes, the containers' counters.
  EXPECT_EQ(process_names.size(), 6u);
  std::set<std::string> names;
  for (const auto& [pid, name] : process_names) names.insert(name);
  EXPECT_TRUE(names.count("run-a.gpuqcap: gpu 11437"));
  EXPECT_TRUE(names.count("run-a.gpuqcap: gpu 23710"));
  EXPECT_TRUE(names.count(std::string("run-a.gpuqcap: pid 4242 (") +
                          kHostileComm + ")"));
}

TEST(RenderPerfetto, OverlappingSlicesNeverShareAThread) {
  const Json doc = Parse({SampleReport()});
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> by_tid;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    by_tid[{e["pid"].get<int>(), e["tid"].get<int>()}].emplace_back(
        e["ts"].get<double>(), e["dur"].get<double>());
  }
  for (auto& [key, spans] : by_tid) {
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) {
      EXPECT_LE(spans[i - 1].first + spans[i - 1].second, spans[i].first)
          << "pid " << key.first << " tid " << key.second;
    }
  }
  // The two overlapping evictions on gpu 11437 are on two threads.
  std::set<std::pair<int, int>> eviction_threads;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "eviction") {
      eviction_threads.insert({e["pid"].get<int>(), e["tid"].get<int>()});
    }
  }
  EXPECT_EQ(eviction_threads.size(), 2u);
}

TEST(RenderPerfetto, SeveralRunsUseDisjointPids) {
  const Json doc = Parse({SampleReport("a"), SampleReport("b")});
  std::map<int, std::set<int>> pids_of_run;
  for (const auto& e : doc["traceEvents"]) {
    const int pid = e["pid"];
    pids_of_run[pid / kPerfettoPidsPerRun].insert(pid);
    if (e["name"] == "process_name") {
      const std::string name = e["args"]["name"];
      EXPECT_EQ(name.substr(0, 3),
                pid / kPerfettoPidsPerRun == 1 ? "a: " : "b: ");
    }
  }
  ASSERT_EQ(pids_of_run.size(), 2u);
  EXPECT_EQ(pids_of_run[1].size(), pids_of_run[2].size());
}

TEST(RenderPerfetto, InvalidUtf8NamesDoNotBreakTheJson) {
  RunReport r = SampleReport();
  r.timeline.lifetime_tracks[r.timeline.queue_lifetimes[0].track] =
      "pid 1 (\xff\xfe)";
  const std::string out = RenderPerfetto({r});
  Json parsed;
  EXPECT_NO_THROW(parsed = Json::parse(out));
}

TEST(RenderPerfetto, EmptyReportIsAValidEmptyTrace) {
  RunReport r;
  r.name = "empty";
  const Json doc = Parse({r});
  EXPECT_TRUE(doc["traceEvents"].is_array());
  EXPECT_TRUE(doc["traceEvents"].empty());
}

}  // namespace
}  // namespace gpuq::report
