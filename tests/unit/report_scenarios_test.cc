// The report scenarios (examples/README.md, "Report scenarios") through
// AnalyzeCapture: the hand-worked figures, asserted independently of the
// report goldens; and what the renderers promise (schema, column order).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "report/comparison.h"
#include "report/headline.h"
#include "report/render_html.h"
#include "report/render_json.h"
#include "report/render_text.h"
#include "report/report_tables.h"
#include "report/run_analysis.h"
#include "scenario.h"

namespace gpuq::report {
namespace {

RunReport Analyze(bool (*build)(const EventSink&, ScenarioSummary*),
                  const std::string& name) {
  Capture c;
  c.header.start_realtime_ns = kScenarioStartNs;
  EXPECT_TRUE(build(
      [&c](const Event& e) {
        c.events.push_back(e);
        return true;
      },
      nullptr));
  return AnalyzeCapture(c, name + ".gpuqcap");
}

// The bundled capture (examples/default.gpuqcap), as `report` reads it.
RunReport AnalyzeBundled() {
  RunReport r;
  std::string error;
  EXPECT_TRUE(AnalyzeCaptureFile(
      std::string(GPUQ_SOURCE_DIR) + "/examples/default.gpuqcap", 1.0, false,
      &r, &error))
      << error;
  return r;
}

const ContainerRow* FindContainer(const RunReport& r, const std::string& name) {
  for (const ContainerRow& c : r.containers) {
    if (c.owner.container == name) return &c;
  }
  return nullptr;
}

TEST(ReportScenarioTest, CnnIsASingleQueue) {
  const RunReport r = Analyze(BuildCnnScenario, "cnn");
  EXPECT_EQ(r.records, 130u);
  EXPECT_DOUBLE_EQ(r.duration_s, 121.0);
  EXPECT_EQ(r.queues_peak, 1u);
  EXPECT_EQ(r.queues_created, 1u);
  EXPECT_EQ(r.queues_destroyed, 1u);
  EXPECT_EQ(r.queues_at_end, 0u);
  EXPECT_EQ(r.submissions, 127099u);
  EXPECT_DOUBLE_EQ(r.submissions_mean_per_s, 127099.0 / 121);
  EXPECT_DOUBLE_EQ(r.submissions_peak_per_s, 1099);
  EXPECT_EQ(r.pending_peak, 2u);
  ASSERT_EQ(r.gpu_queues.size(), 1u);
  EXPECT_DOUBLE_EQ(r.gpu_queues[0].lifetime.max, 120.5);
  ASSERT_EQ(r.runlist.size(), 1u);
  EXPECT_EQ(r.runlist[0].unmaps, 1u);
  EXPECT_EQ(r.runlist[0].maps, 2u);
  EXPECT_DOUBLE_EQ(r.runlist[0].map.p50, 70e-6);
  const ContainerRow* cnn = FindContainer(r, "cnn");
  ASSERT_NE(cnn, nullptr);
  EXPECT_EQ(cnn->at_end.unmaps_caused, 1u);
  EXPECT_EQ(r.classification, QueueClass::kSingleQueue);
  EXPECT_STREQ(QueueClassVerdict(r.classification), "design fits");
  // 122 buckets: 0 .. 121; the one queue lived from bucket 0 to 120.
  ASSERT_EQ(r.timeline.queues_per_gpu.size(), 1u);
  EXPECT_EQ(r.timeline.queues_per_gpu[0].size(), 122u);
  EXPECT_EQ(r.timeline.queues_per_gpu[0].at(120), 1);
  EXPECT_EQ(r.timeline.queues_per_gpu[0].at(121), 0);
  // The unmap began 200 us before its record at +121 s.
  ASSERT_EQ(r.timeline.runlist_ops.size(), 3u);
  EXPECT_NEAR(r.timeline.runlist_ops[1].start_s, 121 - 200e-6, 1e-9);
}

TEST(ReportScenarioTest, TransformerHasThreeQueuesOnOneGpu) {
  const RunReport r = Analyze(BuildTransformerScenario, "transformer");
  EXPECT_EQ(r.records, 197u);
  EXPECT_DOUBLE_EQ(r.duration_s, 121.0);
  EXPECT_EQ(r.queues_peak, 3u);
  EXPECT_EQ(r.compute_peak, 2u);
  EXPECT_EQ(r.submissions, 261809u);
  EXPECT_DOUBLE_EQ(r.submissions_peak_per_s, 2330);
  EXPECT_EQ(r.pending_peak, 4u);
  EXPECT_EQ(r.unmaps, 2u);
  EXPECT_EQ(r.maps, 4u);
  EXPECT_EQ(r.process_exits, 1u);
  ASSERT_EQ(r.gpu_queues.size(), 2u);  // compute, sdma
  EXPECT_EQ(r.gpu_queues[0].queue_type, "compute");
  EXPECT_EQ(r.gpu_queues[0].lifetime.count, 2u);
  EXPECT_DOUBLE_EQ(r.gpu_queues[0].lifetime.p50, 60.5);
  EXPECT_DOUBLE_EQ(r.gpu_queues[0].lifetime.max, 120.5);
  EXPECT_DOUBLE_EQ(r.gpu_queues[1].lifetime.max, 120.4);
  EXPECT_EQ(r.classification, QueueClass::kMoreThanGpus);
  EXPECT_EQ(r.compute_classification, QueueClass::kMoreThanGpus);
}

TEST(ReportScenarioTest, Deepseek8HasThreeQueuesPerGpu) {
  const RunReport r = Analyze(BuildDeepseek8Scenario, "deepseek8");
  EXPECT_EQ(r.records, 1018u);
  EXPECT_DOUBLE_EQ(r.duration_s, 60.0);
  EXPECT_EQ(r.gpus_used, 8u);
  EXPECT_EQ(r.queues_peak, 24u);
  EXPECT_EQ(r.compute_peak, 16u);
  EXPECT_EQ(r.queues_at_end, 24u);
  EXPECT_EQ(r.submissions, 720000u);
  EXPECT_DOUBLE_EQ(r.submissions_mean_per_s, 12000);
  EXPECT_DOUBLE_EQ(r.submissions_peak_per_s, 12000);
  EXPECT_EQ(r.pending_peak, 24u);
  EXPECT_EQ(r.unmaps, 0u);
  EXPECT_EQ(r.maps, 24u);
  ASSERT_EQ(r.gpu_submissions.size(), 8u);
  for (const GpuSubmissionRow& g : r.gpu_submissions) {
    EXPECT_EQ(g.submissions, 90000u);
    EXPECT_DOUBLE_EQ(g.mean_per_s, 1500);
  }
  for (const auto& [gpu, peak] : r.peak_per_gpu) EXPECT_EQ(peak, 3u);
  EXPECT_EQ(r.timeline.queue_lifetimes.size(), 24u);  // all open
  for (const QueueLifetime& l : r.timeline.queue_lifetimes) {
    const Slice s = r.timeline.LifetimeSlice(l);
    EXPECT_EQ(s.args.at("end"), "open");
    EXPECT_DOUBLE_EQ(s.start_s + s.duration_s, 60.0);
  }
  EXPECT_EQ(r.classification, QueueClass::kMoreThanGpus);
}

TEST(ReportScenarioTest, SharedGpuSplitsRatesAndPreemptions) {
  const RunReport r = Analyze(BuildSharedGpuScenario, "shared-gpu");
  EXPECT_EQ(r.records, 85u);
  EXPECT_DOUBLE_EQ(r.duration_s, 30.0);
  EXPECT_EQ(r.submissions, 138000u);
  EXPECT_EQ(r.pending_peak, 64u);
  ASSERT_EQ(r.processes.size(), 2u);
  EXPECT_EQ(r.processes[0].pid, 6401u);  // resnet18 sorts first
  EXPECT_EQ(r.processes[0].submissions, 18000u);
  EXPECT_DOUBLE_EQ(r.processes[0].submissions_mean_per_s, 600);
  EXPECT_DOUBLE_EQ(r.processes[0].submissions_peak_per_s, 600);
  EXPECT_EQ(r.processes[1].submissions, 120000u);
  EXPECT_DOUBLE_EQ(r.processes[1].submissions_mean_per_s, 4000);
  const ContainerRow* r18 = FindContainer(r, "resnet18");
  const ContainerRow* r50 = FindContainer(r, "resnet50");
  ASSERT_NE(r18, nullptr);
  ASSERT_NE(r50, nullptr);
  EXPECT_EQ(r18->at_end.unmaps_caused, 5u);
  EXPECT_EQ(r50->at_end.unmaps_caused, 2u);
  EXPECT_EQ(r50->at_end.evictions, 1u);
  // Victims: resnet18's 5 updates take both off the GPU; resnet50's
  // eviction and restore take only resnet18 off (its own queues leave and
  // come back as the eviction).
  EXPECT_EQ(r18->at_end.preempted_by_self, 5u);
  EXPECT_EQ(r18->at_end.preempted_by_others, 2u);
  EXPECT_EQ(r50->at_end.preempted_by_self, 0u);
  EXPECT_EQ(r50->at_end.preempted_by_others, 5u);
  EXPECT_GT(r50->at_end.OffSeconds(), 0.0);
  EXPECT_EQ(r18->classification, QueueClass::kSingleQueue);
  EXPECT_EQ(r.classification, QueueClass::kMoreThanGpus);
  ASSERT_EQ(r.runlist.size(), 1u);
  const RunlistRow& l = r.runlist[0];
  EXPECT_EQ(l.unmaps, 7u);
  EXPECT_DOUBLE_EQ(l.unmap.p50, 250e-6);
  EXPECT_DOUBLE_EQ(l.unmap.p90, 500e-6);
  EXPECT_DOUBLE_EQ(l.unmap.p99, 500e-6);
  EXPECT_NEAR(l.unmap.sum, 1.9e-3, 1e-12);
  EXPECT_EQ(l.maps, 9u);
  EXPECT_DOUBLE_EQ(l.map.p50, 50e-6);
  EXPECT_DOUBLE_EQ(l.map.p90, 80e-6);
  ASSERT_EQ(r.eviction_list.size(), 1u);
  EXPECT_EQ(r.eviction_list[0].trigger, "ttm");
  EXPECT_NEAR(*r.eviction_list[0].duration_s, 0.2, 1e-9);
  // Per-process rate series: each round's 600 packets in the second before
  // it (the first from the create at +0.2 s), so 600/s in buckets 0 .. 29
  // and 0 in bucket 30, the last record's.
  ASSERT_EQ(r.timeline.submission_rate_per_process.size(), 2u);
  const Series& s18 = r.timeline.submission_rate_per_process[0];
  EXPECT_EQ(s18.name, "pid 6401 (python3)");
  ASSERT_EQ(s18.size(), 31u);
  for (size_t i = 0; i + 1 < s18.size(); ++i) {
    EXPECT_EQ(s18.at(i), 600) << "bucket " << i;
  }
  EXPECT_EQ(s18.at(30), 0);
}

// The users' experiment: how often was the latency container preempted,
// for how long and by whom, and was the scheduler oversubscribed (the
// windows are worked out in examples/README.md, "pair-oversubscribed").
TEST(ReportScenarioTest, PairAnswersVictimsAndOversubscription) {
  const RunReport over =
      Analyze(BuildPairOversubscribedScenario, "pair-oversubscribed");
  const ContainerRow* lat = FindContainer(over, "latency");
  const ContainerRow* batch = FindContainer(over, "batch");
  ASSERT_NE(lat, nullptr);
  ASSERT_NE(batch, nullptr);
  EXPECT_EQ(lat->at_end.preempted_by_others,
            8u);  // batch's creates and destroys
  EXPECT_EQ(lat->at_end.preempted_by_self,
            0u);  // its create's queue was not mapped
  EXPECT_NEAR(lat->at_end.OffSeconds(), 0.0096, 1e-9);  // 8 x (200 us + 1 ms)
  // its creates, destroys and the CU mask set (an update: unmap, map)
  EXPECT_EQ(batch->at_end.unmaps_caused, 10u);
  EXPECT_EQ(batch->at_end.preempted_by_others, 1u);  // latency's create
  // What the priority scheduler works with: latency's high-priority queue,
  // batch's first stream fenced to 152 of the MI300X's 304 CUs.
  EXPECT_EQ(lat->high_priority_peak, 1u);
  EXPECT_EQ(lat->cu_restricted_peak, 0u);
  EXPECT_EQ(batch->high_priority_peak, 0u);
  EXPECT_EQ(batch->cu_restricted_peak, 1u);
  EXPECT_EQ(over.high_priority_peak, 1u);
  EXPECT_EQ(over.cu_restricted_peak, 1u);
  ASSERT_EQ(over.runlist.size(), 1u);
  ASSERT_TRUE(over.runlist[0].oversubscription.has_value());
  const OversubscriptionFigures& o = *over.runlist[0].oversubscription;
  EXPECT_EQ(o.maps, 7u);
  EXPECT_EQ(o.by_reason.at("compute_queues"), 7u);
  EXPECT_EQ(o.by_reason.count("processes"), 0u);
  EXPECT_NEAR(o.seconds, 25.2828, 1e-9);
  EXPECT_TRUE(o.at_end);
  const std::string text = RenderText({over}, false);
  EXPECT_NE(text.find("compute_queues=7"), std::string::npos) << text;
  const std::string classes =
      text.substr(text.find("QUEUE PRIORITIES AND CU MASKS"));
  EXPECT_TRUE(std::regex_search(classes, std::regex("\nlatency +1 +0\n")))
      << classes;
  EXPECT_TRUE(std::regex_search(classes, std::regex("\nbatch +0 +1\n")))
      << classes;
  // The timeline's windows: the six that closed are the seconds; the last,
  // from 25.511 s, is still open and ends with the capture.
  const auto& windows = over.timeline.oversubscribed;
  ASSERT_EQ(windows.size(), 7u);
  double closed = 0;
  for (size_t k = 0; k + 1 < windows.size(); ++k) {
    EXPECT_EQ(windows[k].track, "gpu 11437");
    EXPECT_EQ(windows[k].args.count("end"), 0u) << k;
    closed += windows[k].duration_s;
  }
  EXPECT_NEAR(closed, 25.2828, 1e-9);
  EXPECT_NEAR(windows[0].start_s, 0.201, 1e-9);
  EXPECT_NEAR(windows[0].duration_s, 5.4998 - 0.201, 1e-9);
  EXPECT_EQ(windows[0].name, "oversubscribed: compute_queues 3/2");
  EXPECT_EQ(windows[0].args.at("compute_queues"), "3/2");
  EXPECT_EQ(windows[0].args.at("processes"), "2/8");
  EXPECT_NEAR(windows[3].duration_s, 15.5098 - 15.501, 1e-9);
  EXPECT_EQ(windows[6].args.at("end"), "open");
  EXPECT_NEAR(windows[6].start_s, 25.511, 1e-9);
  EXPECT_NEAR(windows[6].start_s + windows[6].duration_s, over.duration_s,
              1e-9);
  // The same run with 24 CP queue slots: the same preemptions, never
  // oversubscribed.
  const RunReport fits = Analyze(BuildPairFitsScenario, "pair-fits");
  ASSERT_EQ(fits.runlist.size(), 1u);
  ASSERT_TRUE(fits.runlist[0].oversubscription.has_value());
  EXPECT_EQ(fits.runlist[0].oversubscription->maps, 0u);
  EXPECT_EQ(fits.runlist[0].oversubscription->seconds, 0.0);
  EXPECT_FALSE(fits.runlist[0].oversubscription->at_end);
  EXPECT_TRUE(fits.timeline.oversubscribed.empty());
  EXPECT_EQ(FindContainer(fits, "latency")->at_end.preempted_by_others, 8u);
  // Captures without the runlist read (every other scenario) show none.
  EXPECT_FALSE(Analyze(BuildSharedGpuScenario, "shared-gpu")
                   .runlist[0]
                   .oversubscription.has_value());
}

// "How often was the latency container preempted, for how long, and by
// whom": 8 times, 9.6 ms, every time by batch's operations; and each
// container's rows add up to its preemptions and seconds off the GPU.
TEST(ReportScenarioTest, PairSaysWhoPreemptedWhom) {
  const RunReport r =
      Analyze(BuildPairOversubscribedScenario, "pair-oversubscribed");
  std::map<std::string, std::pair<uint64_t, double>> sums;
  const PreemptedByRow* latency_by_batch = nullptr;
  for (const PreemptedByRow& p : r.preempted_by) {
    ASSERT_TRUE(p.by.has_value());
    sums[p.owner.container].first += p.preemptions;
    sums[p.owner.container].second += p.seconds_off_gpu;
    if (p.owner.container == "latency") {
      EXPECT_EQ(p.by->container, "batch");
      latency_by_batch = &p;
    }
  }
  ASSERT_NE(latency_by_batch, nullptr);
  EXPECT_EQ(latency_by_batch->preemptions, 8u);
  EXPECT_NEAR(latency_by_batch->seconds_off_gpu, 0.0096, 1e-9);
  ASSERT_EQ(sums.size(), 2u);
  for (const auto& [name, sum] : sums) {
    const ContainerRow* c = FindContainer(r, name);
    ASSERT_NE(c, nullptr) << name;
    EXPECT_EQ(sum.first,
              c->at_end.preempted_by_self + c->at_end.preempted_by_others)
        << name;
    EXPECT_NEAR(sum.second, c->at_end.OffSeconds(), 1e-12) << name;
  }
  const std::string text = RenderText({r}, false);
  const std::string section = text.substr(text.find("WHO PREEMPTED WHOM"));
  EXPECT_TRUE(
      std::regex_search(section, std::regex("\nlatency +batch +8 +9.6 ms\n")))
      << section;
  // The timeline's off-GPU windows name the container that caused them.
  size_t named = 0;
  for (const Slice& w : r.timeline.off_gpu) {
    if (w.args.at("container") != "latency") continue;
    EXPECT_EQ(w.args.at("caused_by_container"), "batch");
    ++named;
  }
  EXPECT_EQ(named, 8u);
}

TEST(ReportRenderTest, JsonCarriesTheSchemaAndOneRunPerCapture) {
  const RunReport a = Analyze(BuildCnnScenario, "cnn");
  const RunReport b = Analyze(BuildSharedGpuScenario, "shared-gpu");
  const auto j = nlohmann::json::parse(RenderJson({a, b}));
  EXPECT_EQ(j.at("schema"), "gpuq-report/1");
  ASSERT_EQ(j.at("runs").size(), 2u);
  EXPECT_EQ(j["runs"][0]["name"], "cnn.gpuqcap");
  EXPECT_EQ(j["runs"][0]["submissions"]["total"], 127099);
  EXPECT_EQ(j["runs"][0]["classification"]["verdict"], "design fits");
  EXPECT_EQ(j["runs"][1]["eviction_list"][0]["trigger"], "ttm");
}

// Found by tests/fuzz/capture_fuzzer: a GPU name (or comm) that is not
// UTF-8 made `report --output json` throw nlohmann's type_error 316.
TEST(ReportRenderTest, JsonReplacesInvalidUtf8InNames) {
  RunReport r = Analyze(BuildCnnScenario, "cnn");
  ASSERT_FALSE(r.processes.empty());
  r.processes[0].comm = "py\xff\xfe";
  r.name = "run\xc3";
  std::string out;
  ASSERT_NO_THROW(out = RenderJson({r}));
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["runs"][0]["name"], "run\xef\xbf\xbd");  // U+FFFD
}

// The schedulers' comparison: the latency container's preemptions in each
// run, matched by name; "-" in a run it was not in.
TEST(ReportRenderTest, ComparisonGivesEachPreemptedContainerARow) {
  const RunReport over =
      Analyze(BuildPairOversubscribedScenario, "pair-oversubscribed");
  const RunReport cnn = Analyze(BuildCnnScenario, "cnn");
  const std::vector<ComparedPreemption> rows = ComparePreemptions({over, cnn});
  std::map<std::string, const ComparedPreemption*> by_name;
  for (const ComparedPreemption& c : rows) by_name[c.container] = &c;
  ASSERT_EQ(by_name.count("latency"), 1u);
  const ComparedPreemption& latency = *by_name["latency"];
  ASSERT_EQ(latency.runs.size(), 2u);
  ASSERT_TRUE(latency.runs[0].has_value());
  EXPECT_EQ(latency.runs[0]->first, 8u);
  EXPECT_NEAR(latency.runs[0]->second, 0.0096, 1e-9);
  EXPECT_FALSE(latency.runs[1].has_value());
  // cnn caused its unmap but held no queue another took off: no row.
  EXPECT_EQ(by_name.count("cnn"), 0u);
  const std::string text = RenderText({over, cnn}, false);
  EXPECT_TRUE(std::regex_search(
      text, std::regex("\n  latency: preempted, off GPU +8, 9\\.6 ms +-\\n")))
      << text;
}

// The comparison is one row list: text, markdown and HTML show the same
// rows with the same cells, in its order.
TEST(ReportRenderTest, ComparisonIsTheSameRowsInTextAndHtml) {
  const std::vector<RunReport> runs = {
      Analyze(BuildPairOversubscribedScenario, "pair-oversubscribed"),
      Analyze(BuildCnnScenario, "cnn")};
  const std::vector<ComparisonRow> rows = ComparisonRows(runs);
  ASSERT_GT(rows.size(), 20u);
  EXPECT_EQ(rows.back().what, "verdict");
  const std::string text = RenderText(runs, false);
  const std::string md = RenderText(runs, true);
  const std::string html = RenderHtml(runs);
  size_t text_at = 0;
  size_t html_at = html.find("id=\"comparison-table\"");
  ASSERT_NE(html_at, std::string::npos);
  for (const ComparisonRow& row : rows) {
    ASSERT_EQ(row.cells.size(), runs.size()) << row.what;
    // Row names and cells need no HTML escaping ("<", "&", quotes).
    ASSERT_EQ(row.what.find_first_of("<>&\"'"), std::string::npos);
    std::string html_row = "<tr><td>" + row.what + "</td>";
    std::string md_row = "| " + row.what + " |";
    for (const std::string& cell : row.cells) {
      html_row += "<td class=\"n\">" + cell + "</td>";
      md_row += " " + cell + " |";
    }
    const size_t t = text.find("\n" + row.what + " ", text_at);
    ASSERT_NE(t, std::string::npos) << row.what << " in the text";
    text_at = t + 1;
    const size_t h = html.find(html_row, html_at);
    ASSERT_NE(h, std::string::npos) << html_row << " in the HTML";
    html_at = h + 1;
    EXPECT_NE(md.find(md_row), std::string::npos) << md_row;
  }
}

// The headline is one list: the text and markdown summary show its lines in
// its order, the JSON its members, the HTML its cards.
TEST(ReportRenderTest, HeadlineIsTheSameFiguresInEveryOutput) {
  const RunReport r = AnalyzeBundled();
  const std::vector<HeadlineFigure> figures = Headline(r);
  const std::string text = RenderText({r}, false);
  const std::string md = RenderText({r}, true);
  const auto run = nlohmann::ordered_json::parse(RenderJson({r}))["runs"][0];
  const std::string html = RenderHtml({r});
  size_t text_at = text.find("\nSUMMARY\n");
  ASSERT_NE(text_at, std::string::npos);
  size_t html_at = html.find("<div class=\"cards\">");
  ASSERT_NE(html_at, std::string::npos);
  size_t members = 0;
  size_t cards = 0;
  for (const HeadlineFigure& f : figures) {
    if (!f.what.empty()) {
      const std::regex line(
          "\n" + f.what + " +" +
          std::regex_replace(f.text, std::regex(R"([()+.*?])"), R"(\$&)") +
          "\n");
      std::smatch m;
      const std::string rest = text.substr(text_at);
      ASSERT_TRUE(std::regex_search(rest, m, line)) << f.what << " in the text";
      text_at += m.position(0) + 1;
      EXPECT_NE(md.find("| " + f.what + " | " + f.text + " |"),
                std::string::npos)
          << f.what << " in the markdown";
    }
    for (const auto& [key, value] : f.json.items()) {
      ASSERT_TRUE(run.contains(key)) << key;
      EXPECT_EQ(run[key], value) << key;
      ++members;
    }
    for (const HeadlineCard& c : f.cards) {
      const size_t h =
          html.find("<div class=\"k\">" + c.title + "</div><div class=\"v\">" +
                        c.value + "</div>",
                    html_at);
      ASSERT_NE(h, std::string::npos) << c.title << " in the HTML";
      html_at = h + 1;
      ++cards;
    }
  }
  EXPECT_GE(members, 17u);
  EXPECT_EQ(cards, 11u);
  // Nothing in the JSON headline but the figures' members: the run's
  // other members are its tables and timeline.
  for (const auto& [key, value] : run.items()) {
    if (value.is_array() || key == "timeline") continue;
    bool listed = false;
    for (const HeadlineFigure& f : figures) listed |= f.json.contains(key);
    EXPECT_TRUE(listed) << key << " is not a headline figure";
  }
}

// The summary answers the users' question at a glance: how often queues
// were taken off the GPU, for how long, and whether the runlist was
// oversubscribed; the per-container and per-GPU tables say the same in
// detail.
TEST(ReportRenderTest, HeadlineSaysPreemptionsAndOversubscription) {
  const RunReport r =
      Analyze(BuildPairOversubscribedScenario, "pair-oversubscribed");
  uint64_t suffered = 0;
  double off_s = 0;
  for (const PreemptedByRow& p : r.preempted_by) {  // "Who preempted whom"
    suffered += p.preemptions;
    off_s += p.seconds_off_gpu;
  }
  EXPECT_EQ(suffered, 19u) << "latency 8 (all by batch), batch 11";
  const auto run = nlohmann::json::parse(RenderJson({r}))["runs"][0];
  EXPECT_EQ(run["preemptions"]["suffered"], suffered);
  EXPECT_NEAR(run["preemptions"]["seconds_off_gpu"].get<double>(), off_s, 1e-9);
  EXPECT_NEAR(off_s, 0.0228, 1e-9);
  EXPECT_EQ(run["oversubscription"]["maps"], 7);
  EXPECT_EQ(run["oversubscription"]["by_reason"]["compute_queues"], 7);
  const std::string text = RenderText({r}, false);
  EXPECT_NE(text.find("\nqueues preempted       19 (per container), 22.8 ms "
                      "off the GPU\n"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("\noversubscribed         7 runlists, 25.3 s (per GPU)\n"),
      std::string::npos)
      << text;
  EXPECT_NEAR(run["oversubscription"]["seconds"].get<double>(), 25.2828, 1e-9);
  // A run no map read a runlist of says it could not tell, not "0".
  const RunReport cnn = Analyze(BuildCnnScenario, "cnn");
  EXPECT_TRUE(
      nlohmann::json::parse(RenderJson({cnn}))["runs"][0]["oversubscription"]
          .is_null());
  EXPECT_NE(RenderText({cnn}, false)
                .find("\noversubscribed         - (no map read its runlist)\n"),
            std::string::npos);
}

// The unsampled queues are a report table: text and markdown show it under
// its title, HTML as a table, the JSON among each container's figures.
TEST(ReportRenderTest, UnsampledQueuesAreOneTableInEveryOutput) {
  const RunReport r = AnalyzeBundled();
  const std::string text = RenderText({r}, false);
  EXPECT_TRUE(std::regex_search(
      text, std::regex("\nUNSAMPLED QUEUES\nCONTAINER +UNSAMPLED_PEAK +"
                       "UNSAMPLED_AT_END\n\\(host\\) +1 +1\n")))
      << text;
  const std::string html = RenderHtml({r});
  EXPECT_NE(html.find("-unsampled\"><thead><tr><th>container</th><th "
                      "class=\"n\">peak</th><th class=\"n\">at the end</th>"
                      "</tr></thead><tbody>\n<tr><td>(host)</td><td "
                      "class=\"n\">1</td><td class=\"n\">1</td></tr>"),
            std::string::npos);
  const auto run = nlohmann::json::parse(RenderJson({r}))["runs"][0];
  EXPECT_FALSE(run.contains("unsampled"));
  bool host = false;
  for (const auto& c : run["containers"]) {
    if (c["owner"]["container"] != "") continue;  // the host
    host = true;
    EXPECT_EQ(c["unsampled_queues_peak"], 1);
    EXPECT_EQ(c["unsampled_queues_at_end"], 1);
  }
  EXPECT_TRUE(host);
  // A run whose queues were all read says so in every output.
  const RunReport cnn = Analyze(BuildCnnScenario, "cnn");
  EXPECT_NE(
      RenderText({cnn}, false)
          .find("\nUNSAMPLED QUEUES\nnone, the submissions are complete\n"),
      std::string::npos);
  EXPECT_NE(RenderHtml({cnn}).find(
                "Every queue was sampled: the submissions are complete."),
            std::string::npos);
}

TEST(ReportRenderTest, ComparisonKeepsTheOrderGivenAndEndsWithTheVerdict) {
  const RunReport cnn = Analyze(BuildCnnScenario, "dir/cnn");
  const RunReport ds = Analyze(BuildDeepseek8Scenario, "deepseek8");
  const std::string text = RenderText({ds, cnn}, false);
  const size_t header = text.find("deepseek8");
  ASSERT_NE(header, std::string::npos);
  EXPECT_LT(header, text.find("cnn"));
  const std::string last = text.substr(text.rfind("verdict"));
  EXPECT_NE(last.find("needs selective preemption"), std::string::npos);
  EXPECT_NE(last.find("design fits"), std::string::npos);
  const std::string md = RenderText({cnn, ds}, true);
  EXPECT_NE(md.find("| verdict | design fits | needs selective preemption |"),
            std::string::npos);
}

// What a comparison calls each run: its label, else the shortest path
// suffix no other run has; the text and the HTML alike.
TEST(ReportRenderTest, RunsAreCalledByLabelOrShortestDistinctSuffix) {
  const auto labels =
      [](std::vector<std::pair<std::string, std::string>> runs) {
        std::vector<RunReport> reports;
        for (auto& [name, label] : runs) {
          RunReport r;
          r.name = name;
          r.label = label;
          reports.push_back(std::move(r));
        }
        return RunLabels(reports);
      };
  using V = std::vector<std::string>;
  EXPECT_EQ(labels({{"a/run.gpuqcap", ""}, {"b/run.gpuqcap", ""}}),
            (V{"a/run", "b/run"}));
  EXPECT_EQ(labels({{"x/a/run.gpuqcap", ""},
                    {"y/a/run.gpuqcap", ""},
                    {"other.gpuqcap", ""}}),
            (V{"x/a/run", "y/a/run", "other"}));
  // Only the runs called alike get longer.
  EXPECT_EQ(labels({{"/data/p/q/run.gpuqcap", ""}, {"q/run.gpuqcap", ""}}),
            (V{"p/q/run", "q/run"}));
  EXPECT_EQ(labels({{"./cnn.gpuqcap", ""}, {"/tmp/deepseek8.gpuqcap", ""}}),
            (V{"cnn", "deepseek8"}));
  EXPECT_EQ(labels({{"a/run.gpuqcap", "before"}, {"b/run.gpuqcap", "after"}}),
            (V{"before", "after"}));
  // The same capture twice, and a suffix that is another run's label.
  EXPECT_EQ(labels({{"run.gpuqcap", ""}, {"./run.gpuqcap", ""}}),
            (V{"run", "run (2)"}));
  EXPECT_EQ(labels({{"run.gpuqcap", "x"}, {"d/x.gpuqcap", ""}}),
            (V{"x", "d/x"}));
  EXPECT_EQ(labels({{"run.gpuqcap", "x"}, {"x.gpuqcap", ""}}),
            (V{"x", "x (2)"}));

  RunReport a = Analyze(BuildCnnScenario, "a/run.gpuqcap");
  RunReport b = Analyze(BuildCnnScenario, "b/run.gpuqcap");
  const std::string text = RenderText({a, b}, false);
  EXPECT_NE(text.find("a/run"), std::string::npos) << text;
  EXPECT_NE(text.find("b/run"), std::string::npos) << text;
  a.label = "before";
  b.label = "after";
  EXPECT_NE(RenderText({a, b}, true).find("|  | before | after |"),
            std::string::npos);
  const std::string html = RenderHtml({a, b});
  EXPECT_NE(html.find("Run: before"), std::string::npos);
  EXPECT_NE(html.find("Run: after"), std::string::npos);
}

TEST(ReportRenderTest, DurationsKeepShortUnits) {
  EXPECT_EQ(FormatDuration(140e-6), "140 us");
  EXPECT_EQ(FormatDuration(0.0021), "2.1 ms");
  EXPECT_EQ(FormatDuration(9.000412345), "9.000412345 s");
  EXPECT_EQ(ShortName("/a/b/cnn.gpuqcap"), "cnn");
  EXPECT_EQ(ShortName("run.cap"), "run.cap");
}

}  // namespace
// The bundled capture's doorbells (examples/README.md's table, records
// 156 and 191-193): per container and GPU the rings and packets by type,
// the host's seeded queue under GPU "unknown" (its create never seen), as
// gpuq_doorbells_total and gpuq_doorbell_packets_total count them.
TEST(ReportScenarioTest, DoorbellsPerContainerAndGpuByPacketType) {
  const RunReport r = AnalyzeBundled();
  using Figures = std::tuple<std::string, uint32_t, uint64_t, uint64_t,
                             uint64_t, uint64_t, uint64_t>;
  std::vector<Figures> got;
  for (const DoorbellRow& d : r.doorbell_list) {
    got.emplace_back(d.owner.container, d.gpu_id, d.rings, d.kernel_dispatch,
                     d.barrier, d.other, d.unreadable);
  }
  // (container, GPU, rings, kernel dispatch, barrier, other, unreadable)
  EXPECT_EQ(got, (std::vector<Figures>{{"", 0, 70, 60, 0, 10, 0},
                                       {"vllm", 11437, 2500, 2450, 48, 0, 2}}));
  EXPECT_EQ(r.doorbell_list.at(1).Packets(), 2500u);
  EXPECT_EQ(r.doorbell_list.at(0).rings + r.doorbell_list.at(1).rings,
            r.doorbells);
  const std::string text = RenderText({r}, false);
  EXPECT_NE(text.find("(host)     unknown  70     70       60               0 "
                      "            0            0        10     0"),
            std::string::npos)
      << text;
}

// Every table section, in every scenario and the bundled capture (which
// has the create failures): one cell per column in each row (the renderers
// index a row by the columns they show), and every table has rows somewhere.
TEST(ReportScenarioTest, EveryTableRowHasACellPerColumn) {
  const RunReport bundled = AnalyzeBundled();
  std::map<std::string, size_t> rows_of;  // table -> rows in all runs
  for (const RunReport& r :
       {bundled, Analyze(BuildCnnScenario, "cnn"),
        Analyze(BuildTransformerScenario, "transformer"),
        Analyze(BuildDeepseek8Scenario, "deepseek8"),
        Analyze(BuildSharedGpuScenario, "shared-gpu"),
        Analyze(BuildPairOversubscribedScenario, "pair-oversubscribed"),
        Analyze(BuildPairFitsScenario, "pair-fits"),
        Analyze(BuildCpxScenario, "cpx")}) {
    for (const ReportTable& t : ReportTables(r)) {
      rows_of[t.key] += t.rows.size();
      for (const auto& row : t.rows) {
        EXPECT_EQ(row.size(), t.columns.size()) << r.name << " " << t.key;
      }
    }
  }
  for (const auto& [key, rows] : rows_of) EXPECT_GT(rows, 0u) << key;
}

}  // namespace gpuq::report
