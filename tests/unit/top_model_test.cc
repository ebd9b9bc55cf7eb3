// `gpuq-agent top` without a terminal: rows from snapshots (agent/top/
// top_model.h), rates between two snapshots, sorting, grouping and the text
// at a given width; the paced replay source; the command runner of record.
#include "top/top_model.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <set>
#include <string>

#include "cli/child_command.h"
#include "event_builders.h"
#include "model/pipeline.h"
#include "sources/fake_source.h"
#include "sources/paced_source.h"

// Its own namespace: the unit tests build as one unity translation unit per
// batch (tests/CMakeLists.txt), where its constants met another file's.
namespace gpuq::top_model_test {
namespace {

constexpr uint64_t kCgA = 10, kCgB = 20;
constexpr uint64_t kSecond = 1000000000ull;

/// A snapshot with two containers (labels "alpha", "beta") by hand: what
/// the rows are made of, nothing else.
Snapshot TwoContainers(uint64_t alpha_submissions, uint64_t beta_submissions,
                       uint64_t beta_unmaps, uint64_t alpha_evictions) {
  Snapshot s;
  s.source = "bpf";
  s.labels[kCgA] = SeriesLabels{"alpha", "", "", {}};
  s.labels[kCgB] = SeriesLabels{"beta", "pod-0", "ns", {}};
  s.queue_series[{kCgA, 1, 100, GPUQ_QUEUE_COMPUTE}] = {
      3, 3, {}, alpha_submissions};
  s.queue_series[{kCgA, 1, 100, GPUQ_QUEUE_SDMA}] = {2, 2, {}, 0};
  s.queue_series[{kCgA, 1, 200, GPUQ_QUEUE_COMPUTE}] = {1, 1, {}, 0};
  s.queue_series[{kCgB, 2, 100, GPUQ_QUEUE_SDMA_XGMI}] = {
      1, 1, {}, beta_submissions};
  s.processes[{kCgA, 100}] = 1;
  s.processes[{kCgA, 200}] = 1;
  s.processes[{kCgB, 100}] = 1;
  s.pending_packets[{kCgB, 100}] = 7;
  s.runlist_causes[{kCgB, 100, Scheduler::kHws, true, GPUQ_CAUSE_CREATE}] =
      beta_unmaps;
  s.runlist_causes[{kCgB, 100, Scheduler::kHws, false, GPUQ_CAUSE_CREATE}] = 99;
  s.evictions[{kCgA, 200, GPUQ_TRIGGER_SVM}].evictions = alpha_evictions;
  return s;
}

TEST(TopModelTest, GroupsContainersAndTheirGpus) {
  TopModel model;
  model.Update(TwoContainers(0, 0, 0, 0), 0);
  const auto groups = model.Groups(TopSort::kQueues);
  ASSERT_EQ(groups.size(), 2u);
  const TopGroup& alpha = groups[0];
  EXPECT_EQ(alpha.total.container, "alpha");
  EXPECT_EQ(alpha.total.totals.Live(), 6u);
  EXPECT_EQ(alpha.total.totals.compute, 4u);
  EXPECT_EQ(alpha.total.totals.sdma, 2u);
  EXPECT_EQ(alpha.total.totals.processes, 2u);
  ASSERT_EQ(alpha.gpus.size(), 2u);
  EXPECT_EQ(alpha.gpus[0].gpu_id, 100u);  // 5 queues before 1
  EXPECT_EQ(alpha.gpus[0].totals.Live(), 5u);
  EXPECT_EQ(alpha.gpus[1].gpu_id, 200u);
  const TopGroup& beta = groups[1];
  EXPECT_EQ(beta.total.pod, "pod-0");
  EXPECT_EQ(beta.total.totals.sdma, 1u);  // sdma_xgmi is SDMA
  EXPECT_EQ(beta.total.totals.pending, 7u);
  EXPECT_EQ(model.Summary().live_queues, 7u);
  EXPECT_EQ(model.Summary().containers, 2u);
}

// alpha's GPUs 100 and 200 as partitions 1 and 0 of one physical GPU
// (0000:05:00, the partition in the function bits), or as two GPUs.
Snapshot AlphaOnPartitions(bool partitioned) {
  Snapshot s = TwoContainers(0, 0, 0, 0);
  GpuNode p1;
  p1.node = 1;
  p1.gpu_id = 100;
  p1.location_id = partitioned ? 0x0501 : 0x0600;
  GpuNode p0;
  p0.node = 2;
  p0.gpu_id = 200;
  p0.location_id = 0x0500;
  s.gpus = {{100, p1}, {200, p0}};
  // One process of alpha's with queues on both, one of beta's.
  ProcessRow a;
  a.pid = 1;
  a.cgroup_id = kCgA;
  a.queues_per_gpu = {{100, 5}, {200, 1}};
  ProcessRow b;
  b.pid = 2;
  b.cgroup_id = kCgB;
  b.queues_per_gpu = {{100, 1}};
  s.process_rows = {a, b};
  return s;
}

TEST(TopModelTest, APartitionSaysItsPhysicalGpuAndFollowsItsGpusOrder) {
  TopModel model;
  model.Update(AlphaOnPartitions(true), 0);
  const auto groups = model.Groups(TopSort::kName);
  // The physical GPU's row, then its partitions in amd-smi's order:
  // partition 0 (gpu 200) first.
  ASSERT_EQ(groups[0].gpus.size(), 3u);
  const TopRow& physical = groups[0].gpus[0];
  EXPECT_EQ(physical.physical, 0u);
  EXPECT_EQ(physical.partitions, 2u);
  EXPECT_EQ(physical.totals.Live(), 6u);  // 5 + 1
  EXPECT_EQ(physical.totals.compute, 4u);
  EXPECT_EQ(physical.totals.processes, 1u);  // one process on both
  EXPECT_EQ(groups[0].gpus[1].gpu_id, 200u);
  EXPECT_EQ(groups[0].gpus[1].partition, "0.0");
  EXPECT_EQ(groups[0].gpus[1].totals.processes, 1u);
  EXPECT_EQ(groups[0].gpus[2].gpu_id, 100u);
  EXPECT_EQ(groups[0].gpus[2].partition, "0.1");
  // The container's total sums the partitions' rows, not the physical one.
  EXPECT_EQ(groups[0].total.totals.Live(), 6u);
  EXPECT_EQ(groups[0].total.totals.processes, 2u);
  ASSERT_EQ(groups[1].gpus.size(), 2u);
  EXPECT_EQ(groups[1].gpus[0].partitions, 2u);  // beta's physical GPU 0
  EXPECT_EQ(groups[1].gpus[0].totals.pending, 7u);
  EXPECT_EQ(groups[1].gpus[1].partition, "0.1");  // beta's gpu 100
  size_t header = 0;
  auto lines = RenderTop(model, TopSort::kName, 140, "", &header);
  EXPECT_EQ(lines[header + 2].rfind("  physical 0 (2 parts)", 0), 0u)
      << lines[header + 2];
  EXPECT_EQ(lines[header + 3].rfind("    gpu 200 (0.0)", 0), 0u)
      << lines[header + 3];
  EXPECT_EQ(lines[header + 4].rfind("    gpu 100 (0.1)", 0), 0u)
      << lines[header + 4];

  // Two GPUs of their own: no partition, amd-smi's order still.
  TopModel two;
  two.Update(AlphaOnPartitions(false), 0);
  const auto apart = two.Groups(TopSort::kName);
  EXPECT_EQ(apart[0].gpus[0].gpu_id, 200u);  // 0000:05:00 before 0000:06:00
  EXPECT_EQ(apart[0].gpus[0].partition, "");
  ASSERT_EQ(apart[0].gpus.size(), 2u);  // no physical row
  EXPECT_EQ(apart[0].gpus[0].partitions, 0u);
  EXPECT_EQ(apart[0].gpus[1].partitions, 0u);
  lines = RenderTop(two, TopSort::kName, 140, "", &header);
  EXPECT_EQ(lines[header + 2].rfind("  gpu 200 ", 0), 0u) << lines[header + 2];
  EXPECT_EQ(lines[header + 2].find('('), std::string::npos)
      << lines[header + 2];
}

TEST(TopModelTest, NoRatesFromOneSnapshot) {
  TopModel model;
  model.Update(TwoContainers(100, 0, 0, 0), 5 * kSecond);
  const auto groups = model.Groups(TopSort::kQueues);
  EXPECT_FALSE(groups[0].total.submit_rate.has_value());
  EXPECT_FALSE(groups[0].gpus[0].unmap_rate.has_value());
}

TEST(TopModelTest, RatesAreDeltasOverTheTimeBetweenSnapshots) {
  TopModel model;
  model.Update(TwoContainers(100, 10, 1, 0), 5 * kSecond);
  // 2 s later: alpha +400 packets, beta +10, 4 unmaps more, 1 eviction.
  model.Update(TwoContainers(500, 20, 5, 1), 7 * kSecond);
  const auto groups = model.Groups(TopSort::kQueues);
  const TopRow& alpha100 = groups[0].gpus[0];
  EXPECT_DOUBLE_EQ(*alpha100.submit_rate, 200.0);
  EXPECT_DOUBLE_EQ(*groups[0].gpus[1].evict_rate, 0.5);
  EXPECT_DOUBLE_EQ(*groups[0].total.submit_rate, 200.0);
  EXPECT_DOUBLE_EQ(*groups[0].total.evict_rate, 0.5);
  // Unmaps count only unmaps (not maps) the container caused.
  EXPECT_DOUBLE_EQ(*groups[1].total.unmap_rate, 2.0);
  EXPECT_DOUBLE_EQ(*groups[1].total.submit_rate, 5.0);
}

TEST(TopModelTest, PreemptionsSufferedAreARateAndTimeOffATotal) {
  // The victims view: alpha's queues on GPU 100 taken off by beta's
  // operations (3 then 7 times) and by its own (once), 0.5 s then 2.5 s off.
  auto with_victims = [](uint64_t by_other, uint64_t off_ms) {
    Snapshot s = TwoContainers(0, 0, 0, 0);
    s.preemptions[{kCgA, 100, Scheduler::kHws, GPUQ_CAUSE_CREATE, false}] = {
        by_other, off_ms * 1000000};
    s.preemptions[{kCgA, 100, Scheduler::kHws, GPUQ_CAUSE_UPDATE, true}] = {1,
                                                                            0};
    return s;
  };
  TopModel model;
  model.Update(with_victims(3, 500), kSecond);
  model.Update(with_victims(7, 2500), 3 * kSecond);
  const auto groups = model.Groups(TopSort::kPreemptRate);
  ASSERT_EQ(groups[0].total.container, "alpha") << "sorted by PREEMPT/S";
  EXPECT_DOUBLE_EQ(*groups[0].gpus[0].preempt_rate, 2.0);
  EXPECT_DOUBLE_EQ(*groups[0].total.preempt_rate, 2.0);
  EXPECT_EQ(groups[0].total.totals.off_ns, 2500000000u);
  EXPECT_DOUBLE_EQ(*groups[1].total.preempt_rate, 0.0);
  size_t header = 0;
  const std::vector<std::string> lines =
      RenderTop(model, TopSort::kPreemptRate, 200, "", &header);
  EXPECT_NE(lines[header].find("PREEMPT/S*"), std::string::npos);
  EXPECT_NE(lines[header].find("OFF_S"), std::string::npos);
  // The OFF_S cell: right-aligned under its header.
  const size_t off_end = lines[header].find("OFF_S") + 5;
  bool shown = false;
  for (const std::string& l : lines) {
    if (l.rfind("alpha", 0) == 0) {
      shown = l.find("2.0") != std::string::npos && off_end >= 5 &&
              l.substr(off_end - 5, 5) == "2.500";
    }
  }
  EXPECT_TRUE(shown) << "alpha's row has PREEMPT/S 2.0 and OFF_S 2.500";
}

TEST(TopModelTest, NoTimePassedKeepsTheLastRates) {
  // A finished replay: the clock stands; the last rates stay shown.
  TopModel model;
  model.Update(TwoContainers(0, 0, 0, 0), kSecond);
  model.Update(TwoContainers(300, 0, 0, 0), 2 * kSecond);
  model.Update(TwoContainers(300, 0, 0, 0), 2 * kSecond);
  EXPECT_DOUBLE_EQ(*model.Groups(TopSort::kQueues)[0].total.submit_rate, 300);
  // Time passes again: from the last snapshot that moved the clock.
  model.Update(TwoContainers(400, 0, 0, 0), 3 * kSecond);
  EXPECT_DOUBLE_EQ(*model.Groups(TopSort::kQueues)[0].total.submit_rate, 100);
}

TEST(TopModelTest, ACounterThatWentDownCountsFromZero) {
  TopModel model;
  model.Update(TwoContainers(1000, 0, 0, 0), kSecond);
  model.Update(TwoContainers(30, 0, 0, 0), 2 * kSecond);
  EXPECT_DOUBLE_EQ(*model.Groups(TopSort::kQueues)[0].total.submit_rate, 30);
}

TEST(TopModelTest, SortKeysOrderGroupsAndGpus) {
  TopModel model;
  model.Update(TwoContainers(0, 0, 0, 0), kSecond);
  model.Update(TwoContainers(10, 500, 3, 0), 2 * kSecond);
  auto names = [&](TopSort sort) {
    std::vector<std::string> out;
    for (const TopGroup& g : model.Groups(sort))
      out.push_back(g.total.container);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names(TopSort::kQueues), (V{"alpha", "beta"}));
  EXPECT_EQ(names(TopSort::kSubmitRate), (V{"beta", "alpha"}));
  EXPECT_EQ(names(TopSort::kPending), (V{"beta", "alpha"}));
  EXPECT_EQ(names(TopSort::kUnmapRate), (V{"beta", "alpha"}));
  EXPECT_EQ(names(TopSort::kName), (V{"alpha", "beta"}));
  // Within a group too: by submissions, alpha's GPU 100 (10/s) first.
  EXPECT_EQ(model.Groups(TopSort::kSubmitRate)[1].gpus[0].gpu_id, 100u);
  EXPECT_EQ(NextTopSort(TopSort::kName), TopSort::kQueues);
  EXPECT_STREQ(TopSortName(NextTopSort(TopSort::kQueues)), "SUBMIT/S");
}

TEST(TopModelTest, TheHeaderSaysWhichRunlistsAreOversubscribedAndWhy) {
  Snapshot s = TwoContainers(0, 0, 0, 0);
  TopModel model;
  model.Update(s, kSecond);
  EXPECT_FALSE(model.Summary().oversubscribed.has_value())
      << "no runlist read: nothing is said";
  size_t header = 0;
  auto lines = RenderTop(model, TopSort::kQueues, 200, "", &header);
  EXPECT_EQ(lines[1].find("oversubscribed"), std::string::npos) << lines[1];

  // GPU 100's last runlist held 3 compute queues for 2 CP slots, GPU 200's
  // fits.
  OversubscriptionSeries over;
  over.shape.oversubscribed = true;
  over.shape.entries = {2, 3, 0};
  over.shape.limits = {2, 2, 1};
  OversubscriptionSeries fits;
  fits.shape.entries = {1, 1, 0};
  fits.shape.limits = {2, 2, 1};
  s.oversubscription[200] = fits;
  model.Update(s, 2 * kSecond);
  lines = RenderTop(model, TopSort::kQueues, 200, "", &header);
  EXPECT_NE(lines[1].find("oversubscribed: none"), std::string::npos)
      << lines[1];
  s.oversubscription[100] = over;
  model.Update(s, 3 * kSecond);
  lines = RenderTop(model, TopSort::kQueues, 200, "", &header);
  EXPECT_NE(lines[1].find("oversubscribed: gpu 100 (compute_queues 3/2)"),
            std::string::npos)
      << lines[1];
  EXPECT_EQ(lines[1].find("gpu 200"), std::string::npos) << lines[1];
}

TEST(TopModelTest, HighPriorityAndCuRestrictedQueuesAreColumns) {
  // The users' experiment: alpha's latency queue at high priority, beta's
  // batch queue fenced to a subset of the CUs (all_cus does not count).
  Snapshot s = TwoContainers(0, 0, 0, 0);
  s.queues_by_priority[{kCgA, 100, PriorityClass::kHigh}] = 1;
  s.queues_by_priority[{kCgA, 100, PriorityClass::kMedium}] = 4;
  s.queues_cu_masked[{kCgB, 100, CuMaskClass::kRestricted}] = 1;
  s.queues_cu_masked[{kCgB, 100, CuMaskClass::kAllCus}] = 1;
  // And one of beta's compute queues not sampled, two of its queues
  // evicted (EVICTED is the last column).
  s.unsampled_queues[{kCgB, 100, UnsampledReason::kNotRocr}] = 1;
  s.queues_evicted[{kCgB, 100}] = 2;
  TopModel model;
  model.Update(s, kSecond);
  const auto groups = model.Groups(TopSort::kName);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].total.totals.high_priority, 1u);
  EXPECT_EQ(groups[0].total.totals.cu_restricted, 0u);
  EXPECT_EQ(groups[1].total.totals.high_priority, 0u);
  EXPECT_EQ(groups[1].total.totals.cu_restricted, 1u);
  size_t header = 0;
  const auto lines = RenderTop(model, TopSort::kName, 200, "", &header);
  const std::string& h = lines[header];
  ASSERT_NE(h.find("HIGH_PRIO"), std::string::npos) << h;
  ASSERT_NE(h.find("CU_RESTRICTED"), std::string::npos) << h;
  ASSERT_NE(h.find("UNSAMPLED"), std::string::npos) << h;
  ASSERT_EQ(h.substr(h.size() - 7), "EVICTED") << h;
  // Each cell right-aligned under its header.
  const size_t hi_end = h.find("HIGH_PRIO") + 9,
               cu_end = h.find("CU_RESTRICTED") + 13,
               un_end = h.find("UNSAMPLED") + 9, ev_end = h.size();
  EXPECT_EQ(lines[header + 1].substr(hi_end - 1, 1), "1") << lines[header + 1];
  EXPECT_EQ(lines[header + 1].substr(cu_end - 1, 1), "0") << lines[header + 1];
  EXPECT_EQ(lines[header + 1].substr(un_end - 1, 1), "0") << lines[header + 1];
  EXPECT_EQ(lines[header + 1].substr(ev_end - 1, 1), "0") << lines[header + 1];
  const std::string& beta = lines[header + 4];
  ASSERT_EQ(beta.rfind("beta", 0), 0u) << beta;
  EXPECT_EQ(beta.substr(hi_end - 1, 1), "0") << beta;
  EXPECT_EQ(beta.substr(cu_end - 1, 1), "1") << beta;
  EXPECT_EQ(beta.substr(un_end - 1, 1), "1") << beta;
  EXPECT_EQ(beta.substr(ev_end - 1, 1), "2") << beta;
}

TEST(TopModelTest, HostProcessesAndProbeSummary) {
  Snapshot s;
  s.source = "bpf";
  s.labels[1] = SeriesLabels{"", "", "", {}};
  s.queue_series[{1, 1, 100, GPUQ_QUEUE_COMPUTE}] = {1, 1, {}, 0};
  s.probes = {{"queue_create", "f", "fentry", true, ""},
              {"queue_destroy", "g", "kprobe", true, ""},
              {"mes_add", "h", "none", false, ""}};
  TopModel model;
  model.Update(s, 0);
  EXPECT_EQ(model.Summary().probes, "fentry+kprobe 2/3");
  size_t header = 0;
  const auto lines = RenderTop(model, TopSort::kQueues, 100, "", &header);
  EXPECT_EQ(lines[header + 1].rfind("(host)", 0), 0u) << lines[header + 1];
  s.source = "replay";
  EXPECT_EQ(ProbeSummary(s), "replay");
  s.source = "bpf";
  s.probes = {
      {"queue_create", "f", "kprobe", true, "", "lifecycle", "args-kprobe"},
      {"doorbell", "d", "uprobe", true, "", "doorbell", "uprobe"},
      {"mes_add", "m", "none", false, "", "runlist", "none"}};
  EXPECT_EQ(ProbeSummary(s), "args-kprobe+uprobe 2/3");
  s.source = "sysfs";
  s.probes.clear();
  EXPECT_EQ(ProbeSummary(s), "none (sysfs only)");
}

TEST(TopModelTest, NarrowScreensDropColumnsButNeverTheSortColumn) {
  TopModel model;
  model.Update(TwoContainers(0, 0, 0, 0), kSecond);
  model.Update(TwoContainers(10, 500, 3, 1), 2 * kSecond);
  size_t header = 0;
  auto wide = RenderTop(model, TopSort::kQueues, 140, "", &header);
  EXPECT_NE(wide[header].find("EVICT/S"), std::string::npos) << wide[header];
  EXPECT_NE(wide[header].find("OTHER"), std::string::npos);
  EXPECT_NE(wide[header].find("QUEUES*"), std::string::npos);
  auto narrow = RenderTop(model, TopSort::kQueues, 60, "", &header);
  for (const std::string& l : narrow) EXPECT_LE(l.size(), 60u) << l;
  EXPECT_EQ(narrow[header].find("OTHER"), std::string::npos) << narrow[header];
  EXPECT_NE(narrow[header].find("SUBMIT/S"), std::string::npos);
  auto sorted = RenderTop(model, TopSort::kPending, 60, "", &header);
  EXPECT_NE(sorted[header].find("PENDING*"), std::string::npos)
      << sorted[header];
  // Rows: each container, then its GPUs indented.
  EXPECT_EQ(wide[header + 1].rfind("alpha", 0), 0u);
  EXPECT_EQ(wide[header + 2].rfind("  gpu 100", 0), 0u);
  EXPECT_EQ(wide[header + 4].rfind("beta (ns/pod-0)", 0), 0u);
}

TEST(TopModelTest, TheStatusLineSaysPausedBeforeTheMessage) {
  TopModel model;
  model.Update(TwoContainers(0, 0, 0, 0), 0);
  TopView view;
  view.status = "replay finished";
  size_t header = 0;
  auto lines = RenderTop(model, TopSort::kQueues, 200, view, &header);
  ASSERT_EQ(header, 4u);
  EXPECT_EQ(lines[2], "replay finished");
  EXPECT_NE(lines[0].find("? help"), std::string::npos) << lines[0];
  view.paused = true;
  lines = RenderTop(model, TopSort::kQueues, 200, view, &header);
  EXPECT_EQ(lines[2].rfind("PAUSED: ", 0), 0u) << lines[2];
  EXPECT_NE(lines[2].find("p or space resumes   replay finished"),
            std::string::npos)
      << lines[2];
}

TEST(TopModelTest, TheReplayClockIsTheCapturesTimeAtTheLastUpdate) {
  ReplayClock clock;
  // The header's start on both clocks, its first record 0.5 s after it,
  // its last 15.5 s after that one.
  clock.span = {1700000000 * kSecond, 5 * kSecond, 5 * kSecond + kSecond / 2,
                21 * kSecond};
  clock.speed = 20;
  TopView view;
  view.replay = clock;
  TopModel model;
  size_t header = 0;
  // Before any update: the first record's time.
  auto lines = RenderTop(model, TopSort::kQueues, 200, view, &header);
  ASSERT_EQ(header, 5u);
  EXPECT_EQ(lines[2],
            "capture time: 2023-11-14T22:13:20.500Z   0.000 s of 15.500 s   "
            "speed 20x");
  model.Update(TwoContainers(0, 0, 0, 0), 10 * kSecond + 250000000);
  view.replay->speed = 0;
  lines = RenderTop(model, TopSort::kQueues, 200, view, &header);
  EXPECT_EQ(lines[2],
            "capture time: 2023-11-14T22:13:25.250Z   4.750 s of 15.500 s   "
            "speed max");
  // A live view has no such line.
  lines = RenderTop(model, TopSort::kQueues, 200, TopView{}, &header);
  EXPECT_EQ(header, 4u);
  EXPECT_EQ(lines[2].find("capture time"), std::string::npos);
}

TEST(TopModelTest, TheHelpListsEveryKey) {
  const auto lines = RenderTopHelp(200);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("keys"), std::string::npos) << lines[0];
  for (const char* keys :
       {"1 .. 7", "s", "p, space", "?, Esc", "q, Q", "Ctrl-C"}) {
    bool found = false;
    for (const std::string& line : lines) {
      found = found || line.rfind("  " + std::string(keys) + " ", 0) == 0;
    }
    EXPECT_TRUE(found) << keys;
  }
  EXPECT_EQ(lines.size(), TopKeys().size() + 4);
  for (const std::string& line : RenderTopHelp(30)) {
    EXPECT_LE(line.size(), 30u) << line;
  }
}

// docs/top.md's "Keys" table lists the keys the help lists, no more, no
// fewer (a key's cell without its backticks is TopKey::keys).
TEST(TopModelTest, DocsListTheKeysTheHelpLists) {
  std::ifstream doc(std::string(GPUQ_SOURCE_DIR) + "/docs/top.md");
  ASSERT_TRUE(doc) << "docs/top.md";
  std::set<std::string> documented;
  bool in_keys = false;
  for (std::string line; std::getline(doc, line);) {
    if (line.rfind("## ", 0) == 0) in_keys = line == "## Keys";
    if (!in_keys || line.rfind("| ", 0) != 0) continue;
    std::string cell = line.substr(2, line.find(" |", 2) - 2);
    cell.erase(std::remove(cell.begin(), cell.end(), '`'), cell.end());
    if (cell != "key" && cell.find("---") == std::string::npos) {
      documented.insert(cell);
    }
  }
  std::set<std::string> helped;
  for (const TopKey& k : TopKeys()) helped.insert(k.keys);
  EXPECT_EQ(documented, helped);
}

TEST(PacedSourceTest, SpeedZeroDeliversEverythingInOrder) {
  std::vector<Event> events;
  for (uint32_t i = 0; i < 5; ++i) {
    auto e = Create(0x1000, 100, 1, 1, i);
    e.hdr.ts_ns = (i + 1) * 1000 * kSecond;  // 1000 s apart
    events.push_back(e);
  }
  PacedEventSource paced(std::make_unique<FakeEventSource>(events), 0);
  EXPECT_EQ(paced.PeekFirstTimestamp(), 1000 * kSecond);
  EXPECT_EQ(paced.NowNs(), 0u);  // nothing delivered yet
  Event out;
  for (uint32_t i = 0; i < 5; ++i) {
    ASSERT_EQ(paced.Next(&out, std::chrono::milliseconds(0)), NextStatus::kOk);
    EXPECT_EQ(std::get<gpuq_queue_create_event>(out).queue_id, i);
  }
  EXPECT_EQ(paced.Next(&out, std::chrono::milliseconds(0)), NextStatus::kEof);
  EXPECT_EQ(paced.NowNs(), 5000 * kSecond);
}

TEST(PacedSourceTest, ARecordNotDueYetIsHeldBack) {
  // At recorded speed a record 1000 s after the first is not due within a
  // zero timeout: the source says so and delivers it later, unchanged.
  std::vector<Event> events;
  for (uint32_t i = 0; i < 2; ++i) {
    auto e = Create(0x1000, 100, 1, 1, i);
    e.hdr.ts_ns = (1 + 1000 * i) * kSecond;
    events.push_back(e);
  }
  PacedEventSource paced(std::make_unique<FakeEventSource>(events), 1);
  Event out;
  ASSERT_EQ(paced.Next(&out, std::chrono::milliseconds(0)), NextStatus::kOk);
  EXPECT_EQ(paced.Next(&out, std::chrono::milliseconds(0)),
            NextStatus::kTimeout);
  // The capture's clock runs from the first record on, below the second.
  EXPECT_GE(paced.NowNs(), kSecond);
  EXPECT_LT(paced.NowNs(), 1001 * kSecond);
}

TEST(ChildCommandTest, ShellExitStatuses) {
  int err = 0;
  pid_t pid = SpawnCommand({"sh", "-c", "exit 3"}, &err);
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_EQ(ShellExitStatus(status), 3);
  pid = SpawnCommand({"sh", "-c", "kill -TERM $$"}, &err);
  ASSERT_GT(pid, 0);
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_EQ(ShellExitStatus(status), 128 + SIGTERM);
  EXPECT_EQ(SpawnCommand({"/nonexistent/gpuq-no-such-command"}, &err), -1);
  EXPECT_EQ(SpawnFailureStatus(err), 127);
  EXPECT_EQ(SpawnCommand({"/dev/null"}, &err), -1);  // not executable
  EXPECT_EQ(SpawnFailureStatus(err), 126);
}

}  // namespace
}  // namespace gpuq::top_model_test
