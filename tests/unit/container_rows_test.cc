// The rows `--once`, `top` and `report` show agree: each reads the model's
// series through model/container_rows.h, so for the same records the three
// give a container the same queues of each type, submissions, preemptions
// caused and suffered, time off the GPU and evictions. Checked on every
// queue type the ABI names (and one it does not), and on every fixed
// scenario of the bundled capture generator.
#include "model/container_rows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "event_builders.h"
#include "export/collector.h"
#include "export/once_render.h"
#include "report/run_analysis.h"
#include "scenario.h"
#include "top/top_model.h"

namespace gpuq {
namespace {

uint64_t Ms(double seconds) {
  return static_cast<uint64_t>(std::llround(seconds * 1e3));
}

/// What one view says about a container, summed over its GPUs.
struct Figures {
  std::map<std::string, uint64_t> live_by_type;  ///< by queue type label
  uint64_t compute = 0, sdma = 0, other = 0;
  uint64_t submissions = 0;
  uint64_t unmaps_caused = 0;
  uint64_t preempted_by_self = 0, preempted_by_others = 0;
  double off_s = 0;  ///< compared to the millisecond: the views print seconds
  uint64_t evictions = 0;
  uint64_t unsampled = 0;  ///< live now; the report's at its end
  auto Compared() const {
    return std::make_tuple(live_by_type, compute, sdma, other, submissions,
                           unmaps_caused, preempted_by_self,
                           preempted_by_others, Ms(off_s), evictions,
                           unsampled);
  }
  bool operator==(const Figures& o) const { return Compared() == o.Compared(); }
};

std::ostream& operator<<(std::ostream& os, const Figures& f) {
  os << "{types";
  for (const auto& [type, n] : f.live_by_type) os << " " << type << "=" << n;
  return os << ", compute " << f.compute << ", sdma " << f.sdma << ", other "
            << f.other << ", submissions " << f.submissions << ", unmaps "
            << f.unmaps_caused << ", preempted " << f.preempted_by_self << "/"
            << f.preempted_by_others << ", off_s " << f.off_s << ", evictions "
            << f.evictions << ", unsampled " << f.unsampled << "}";
}

Snapshot SnapshotOf(const std::vector<Event>& events) {
  PipelineOptions options;
  options.use_sysfs = false;  // as `--once --replay` and `report`
  Pipeline pipeline(options, nullptr);
  for (const Event& e : events) pipeline.Handle(e);
  return pipeline.TakeSnapshot();
}

/// `--once --format json`'s containers, by container label.
std::map<std::string, Figures> OnceFigures(const Snapshot& s) {
  std::map<std::string, Figures> out;
  const auto doc = nlohmann::json::parse(RenderOnce(s, OnceFormat::kJson));
  for (const auto& c : doc["containers"]) {
    Figures& f = out[c["container"].get<std::string>()];
    for (const auto& g : c["gpus"]) {
      for (const auto& [type, n] : g["queues"].items()) {
        const auto live = n.get<uint64_t>();
        if (live > 0) f.live_by_type[type] += live;
      }
      f.submissions += g["submissions"].get<uint64_t>();
      f.unmaps_caused += g["runlist_unmaps_caused"].get<uint64_t>();
      f.preempted_by_self += g["preempted"]["self"].get<uint64_t>();
      f.preempted_by_others += g["preempted"]["other"].get<uint64_t>();
      f.off_s += g["seconds_off_gpu"].get<double>();
      f.evictions += g["evictions"].get<uint64_t>();
      for (const auto& [why, n] : g["unsampled_queues"].items()) {
        f.unsampled += n.get<uint64_t>();
      }
    }
  }
  // The wide table's COMPUTE, SDMA, OTHER and UNSAMPLED columns (every
  // cell is one word).
  std::istringstream table(RenderOnce(s, OnceFormat::kWide));
  std::string line;
  while (std::getline(table, line) && line != "HARDWARE QUEUES") {
  }
  std::getline(table, line);  // the header
  std::istringstream header(line);
  size_t unsampled_column = 0;
  for (std::string h; header >> h && h != "UNSAMPLED";) ++unsampled_column;
  std::map<std::string, uint64_t> table_unsampled;  // summed over GPU rows
  while (std::getline(table, line) && line.rfind("live queues:", 0) != 0) {
    std::istringstream cells(line);
    std::vector<std::string> c;
    for (std::string cell; cells >> cell;) c.push_back(cell);
    EXPECT_GT(c.size(), unsampled_column) << line;
    if (c.size() <= unsampled_column) continue;
    const std::string name = c[0] == kHostContainer ? "" : c[0];
    out[name].compute += std::stoull(c[5]);
    out[name].sdma += std::stoull(c[6]);
    out[name].other += std::stoull(c[7]);
    table_unsampled[name] += std::stoull(c[unsampled_column]);
  }
  // The JSON's sum, given again by the table's rows: the same in both.
  for (const auto& [name, f] : out) {
    EXPECT_EQ(table_unsampled[name], 0u + f.unsampled) << "container " << name;
  }
  return out;
}

std::map<std::string, Figures> TopFigures(const Snapshot& s) {
  std::map<std::string, Figures> out;
  TopModel top;
  top.Update(s, 0);
  for (const TopGroup& g : top.Groups(TopSort::kName)) {
    const RowTotals& t = g.total.totals;
    Figures& f = out[g.total.container];
    for (const auto& [type, n] : t.live_by_type) {
      if (n > 0) f.live_by_type[QueueTypeLabel(type)] += n;
    }
    f.compute += t.compute;
    f.sdma += t.sdma;
    f.other += t.other;
    f.submissions += t.submissions;
    f.unmaps_caused += t.unmaps_caused;
    f.preempted_by_self += t.preempted_by_self;
    f.preempted_by_others += t.preempted_by_others;
    f.off_s += static_cast<double>(t.off_ns) / 1e9;
    f.evictions += t.evictions;
    f.unsampled += t.Unsampled();
  }
  return out;
}

/// `report` on a capture of `events`.
report::RunReport Analyze(const std::vector<Event>& events) {
  Capture capture;
  capture.events = events;
  return report::AnalyzeCapture(capture, "rows");
}

/// The report's containers table; queues by type from its per-(GPU, type)
/// table, which has no container: only for a capture with one container.
std::map<std::string, Figures> ReportFigures(const std::vector<Event>& events,
                                             bool one_container) {
  const report::RunReport r = Analyze(events);
  std::map<std::string, Figures> out;
  for (const report::ContainerRow& c : r.containers) {
    Figures& f = out[c.owner.container];
    f.submissions += c.at_end.submissions;
    f.unmaps_caused += c.at_end.unmaps_caused;
    f.preempted_by_self += c.at_end.preempted_by_self;
    f.preempted_by_others += c.at_end.preempted_by_others;
    f.off_s += c.at_end.OffSeconds();
    f.evictions += c.at_end.evictions;
    f.unsampled += c.at_end.Unsampled();
  }
  if (one_container && out.size() == 1) {
    Figures& f = out.begin()->second;
    for (const report::GpuQueueRow& g : r.gpu_queues) {
      if (g.at_end > 0) f.live_by_type[g.queue_type] += g.at_end;
    }
  }
  return out;
}

/// The report's queues per container and GPU at the end, summed per
/// container: the queue columns, submissions and unsampled queues.
std::map<std::string, Figures> ReportAtEndFigures(
    const std::vector<Event>& events) {
  std::map<std::string, Figures> out;
  for (const report::ContainerGpuEndRow& g :
       Analyze(events).container_gpus_at_end) {
    Figures& f = out[g.owner.container];
    f.compute += g.totals.compute;
    f.sdma += g.totals.sdma;
    f.other += g.totals.other;
    f.submissions += g.totals.submissions;
    f.unsampled += g.totals.Unsampled();
  }
  return out;
}

TEST(ContainerRowsTest, OnceTopAndReportAgreeOnEveryQueueType) {
  std::vector<uint32_t> types;
  for (uint32_t t = 0; t < GPUQ_QUEUE__MAX; ++t) types.push_back(t);
  types.push_back(GPUQ_QUEUE_UNKNOWN);
  constexpr uint64_t kCgroup = 7;
  const std::string id(64, 'c');
  for (const uint32_t type : types) {
    const std::vector<Event> events = {
        GpuInfo(100, 1),
        PathRecord(kCgroup, "/system.slice/docker-" + id + ".scope"),
        Create(0xffff888000001000ull, 4242, kCgroup, 100, 1, type)};
    const Snapshot s = SnapshotOf(events);
    const auto once = OnceFigures(s);
    const auto top = TopFigures(s);
    ASSERT_EQ(once.size(), 1u) << type;
    const Figures& o = once.begin()->second;
    EXPECT_EQ(o.live_by_type,
              (std::map<std::string, uint64_t>{{QueueTypeLabel(type), 1}}))
        << type;
    EXPECT_EQ(o.compute + o.sdma + o.other, 1u) << type;
    // Created with no ring addresses, a compute queue is not sampled
    // (not_rocr); no other type is asked about.
    EXPECT_EQ(o.unsampled, type == GPUQ_QUEUE_COMPUTE ? 1u : 0u) << type;
    EXPECT_EQ(once, top) << "type " << type;
    // The report has queues by type per GPU, and the compute peak per
    // container by the same column rule.
    auto report = ReportFigures(events, true);
    ASSERT_EQ(report.size(), 1u) << type;
    EXPECT_EQ(report.begin()->second.live_by_type, o.live_by_type) << type;
    const report::RunReport r = Analyze(events);
    ASSERT_EQ(r.containers.size(), 1u) << type;
    EXPECT_EQ(r.containers[0].compute_peak, o.compute) << "type " << type;
    EXPECT_EQ(r.containers[0].at_end.Unsampled(), o.unsampled) << type;
    EXPECT_EQ(r.containers[0].unsampled_peak, o.unsampled) << type;
    EXPECT_EQ(r.unsampled_peak, o.unsampled) << type;
  }
}

// The report's unsampled queues are the model's gauge: read at each bucket's
// end for the peak, after the last record for the end, as --once shows it.
TEST(ContainerRowsTest, ReportKeepsThePeakOfUnsampledQueues) {
  constexpr uint64_t kCgroup = 7;
  constexpr uint64_t kPkey = 0xffff888000001000ull;
  const std::string id(64, 'c');
  auto at = [](auto e, double seconds) {
    e.hdr.ts_ns = static_cast<uint64_t>(std::llround(seconds * 1e9));
    return e;
  };
  // Two compute queues without ring addresses (not ROCr's: not sampled)
  // live together in second 1; one is left at the end; an SDMA queue is
  // never asked about.
  const std::vector<Event> events = {
      GpuInfo(100, 1),
      PathRecord(kCgroup, "/system.slice/docker-" + id + ".scope"),
      at(Create(kPkey, 4242, kCgroup, 100, 1), 0.5),
      at(Create(kPkey, 4242, kCgroup, 100, 2), 1.2),
      at(Create(kPkey, 4242, kCgroup, 100, 3, GPUQ_QUEUE_SDMA), 1.3),
      at(Destroy(kPkey, 4242, kCgroup, 100, 1, GPUQ_QUEUE_COMPUTE), 2.5),
      at(Destroy(kPkey, 4242, kCgroup, 100, 3, GPUQ_QUEUE_SDMA), 3.5)};
  const auto once = OnceFigures(SnapshotOf(events));
  ASSERT_EQ(once.size(), 1u);
  EXPECT_EQ(once.begin()->second.unsampled, 1u);
  Capture capture;
  capture.events = events;
  const report::RunReport r = report::AnalyzeCapture(capture, "unsampled");
  ASSERT_EQ(r.containers.size(), 1u);
  EXPECT_EQ(r.containers[0].unsampled_peak, 2u);
  EXPECT_EQ(r.containers[0].at_end.Unsampled(), 1u);
  EXPECT_EQ(r.unsampled_peak, 2u);
}

class ScenarioRowsTest : public testing::TestWithParam<const char*> {};

TEST_P(ScenarioRowsTest, OnceTopAndReportAgreePerContainer) {
  std::vector<Event> events;
  ASSERT_TRUE(BuildNamedScenario(GetParam(), [&events](const Event& e) {
    events.push_back(e);
    return true;
  }));
  const Snapshot s = SnapshotOf(events);
  const auto once = OnceFigures(s);
  const auto top = TopFigures(s);
  ASSERT_FALSE(once.empty());
  EXPECT_EQ(once, top);
  // The report's containers table carries no queues by type or columns:
  // the counters are compared.
  auto counters = [](std::map<std::string, Figures> m) {
    for (auto& [name, f] : m) {
      f.live_by_type.clear();
      f.compute = f.sdma = f.other = 0;
    }
    return m;
  };
  // A container that only ever held queues and did nothing else has a row
  // in each; the report leaves out none of --once's.
  auto report = ReportFigures(events, false);
  for (const auto& [name, f] : counters(once)) {
    auto it = report.find(name);
    ASSERT_NE(it, report.end()) << "report has no row for '" << name << "'";
    EXPECT_EQ(it->second, f) << "container '" << name << "'";
  }
  // Its queues per container and GPU at the end are --once's rows, queue
  // columns included.
  const auto at_end = ReportAtEndFigures(events);
  EXPECT_EQ(at_end.size(), once.size());
  for (const auto& [name, f] : once) {
    auto it = at_end.find(name);
    ASSERT_NE(it, at_end.end()) << "no row at the end for '" << name << "'";
    const Figures& e = it->second;
    EXPECT_EQ(
        std::make_tuple(e.compute, e.sdma, e.other, e.submissions, e.unsampled),
        std::make_tuple(f.compute, f.sdma, f.other, f.submissions, f.unsampled))
        << "container '" << name << "'";
  }
}

INSTANTIATE_TEST_SUITE_P(Scenarios, ScenarioRowsTest,
                         testing::Values("default", "cnn", "transformer",
                                         "deepseek8", "shared-gpu"),
                         [](const auto& param) {
                           std::string name = param.param;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace gpuq
