// BuildFamilies (export/collector.h): the metric contract. Snapshots come
// from an offline Pipeline (no sysfs, no cgroupfs) fed by hand, with cgroup
// path records so attribution resolves, or are built by hand where the
// pipeline cannot produce the state (reconciliation, probes).
#include "export/collector.h"

#include <gpuq/abi.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "event_builders.h"
#include "metric_matchers.h"
#include "model/pipeline.h"
#include "sources/event.h"
#include "sources/fake_source.h"

namespace gpuq::collector_test {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

const std::string kDockerId =
    "0124dd351391c6c45121cf43714d956032a91aee4fa3fa9ed0cf6b58d62b9307";
const std::string kDockerPath = "/system.slice/docker-" + kDockerId + ".scope";
const std::string kK8sId =
    "f14ff07ef228422ea4392da6401a03c5237022c79a0a5549425e76d43599b9a9";
const std::string kCollectorPodUid = "db3c3553-1e98-4725-809e-8f0d53d633e3";
const std::string kK8sPath =
    "/kubepods.slice/kubepods-burstable.slice/"
    "kubepods-burstable-poddb3c3553_1e98_4725_809e_8f0d53d633e3.slice/"
    "cri-containerd-" +
    kK8sId + ".scope";

constexpr uint64_t kCgDocker = 5861;
constexpr uint64_t kCgDockerNested = 5862;  // a cgroup below the docker scope
constexpr uint64_t kCgK8s = 6342;
constexpr uint64_t kCgHost = 4127;
constexpr uint64_t kCgUnknown = 7777;  // never given a path

constexpr uint32_t kGpu1 = 11437;
constexpr uint32_t kGpu2 = 23710;
constexpr uint64_t kKeyA = 0xffff88811d208000ull;
constexpr uint64_t kKeyB = 0xffff88811d20a800ull;
constexpr uint64_t kKeyC = 0xffff88812e071000ull;
constexpr uint64_t kKeyD = 0xffff888110e1b800ull;

std::unique_ptr<Pipeline> OfflinePipeline(
    std::unique_ptr<EventSource> source = nullptr) {
  PipelineOptions options;
  options.use_sysfs = false;
  return std::make_unique<Pipeline>(options, std::move(source));
}

// A small but complete state: docker, k8s, host and an unresolvable cgroup.
//   docker (kCgDocker): process A on GPU1: compute q0,q1 + sdma q2; q1
//                       destroyed by ioctl. Live: 1 compute, 1 sdma.
//   k8s (kCgK8s):       process C on GPU1: compute q0, exits, q0 destroyed
//                       with reason process_exit. Live: 0.
//   host (kCgHost):     process D on GPU2: compute q0. One ENOMEM failure on
//                       GPU2 and one EINVAL on a gpu not in the topology.
//   unknown:            process B on GPU2: sdma q0.
std::vector<Event> Scenario() {
  return {
      GpuInfo(kGpu1, 1, 90402, 0x0500),
      GpuInfo(kGpu2, 2, 90402, 0x1500),
      PathRecord(kCgDocker, kDockerPath),
      PathRecord(kCgK8s, kK8sPath),
      PathRecord(kCgHost, "/user.slice"),
      Create(kKeyA, 100, kCgDocker, kGpu1, 0, GPUQ_QUEUE_COMPUTE),
      Create(kKeyA, 100, kCgDocker, kGpu1, 1, GPUQ_QUEUE_COMPUTE),
      Create(kKeyA, 100, kCgDocker, kGpu1, 2, GPUQ_QUEUE_SDMA),
      Destroy(kKeyA, 100, kCgDocker, kGpu1, 1, GPUQ_QUEUE_COMPUTE,
              GPUQ_DESTROY_IOCTL),
      Create(kKeyC, 300, kCgK8s, kGpu1, 0, GPUQ_QUEUE_COMPUTE),
      Exit(kKeyC, 300, kCgK8s),
      Destroy(kKeyC, 300, kCgK8s, kGpu1, 0, GPUQ_QUEUE_COMPUTE,
              GPUQ_DESTROY_PROCESS_EXIT),
      Create(kKeyD, 400, kCgHost, kGpu2, 0, GPUQ_QUEUE_COMPUTE),
      CreateFailed(kKeyD, 2817, kCgHost, kGpu2, -12),
      CreateFailed(kKeyD, 2817, kCgHost, 4242, -22),
      Create(kKeyB, 200, kCgUnknown, kGpu2, 0, GPUQ_QUEUE_SDMA),
  };
}

std::vector<MetricFamily> ScenarioFamilies() {
  auto pipeline = OfflinePipeline();
  for (const Event& e : Scenario()) pipeline->Handle(e);
  return BuildFamilies(pipeline->TakeSnapshot());
}

const LabelMap kDocker = {
    {"container", "0124dd351391"}, {"pod", ""}, {"namespace", ""}};
const LabelMap kHost = {{"container", ""}, {"pod", ""}, {"namespace", ""}};
const LabelMap kK8s = {{"container", "f14ff07ef228"}};

LabelMap Plus(LabelMap base, const LabelMap& more) {
  for (const auto& [k, v] : more) base[k] = v;
  return base;
}

/// The metric table of docs/metrics.md: family name -> type column ("gauge (1)"
/// is a gauge), from every row whose first cell names `gpuq_` families.
std::map<std::string, std::string> ReadmeMetricTable() {
  std::ifstream readme(std::string(GPUQ_SOURCE_DIR) + "/docs/metrics.md");
  std::map<std::string, std::string> table;
  for (std::string line; std::getline(readme, line);) {
    if (line.rfind("| `gpuq_", 0) != 0) continue;
    const size_t first = line.find('|', 1);
    const size_t second = line.find('|', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    std::string type = line.substr(first + 1, second - first - 1);
    type = type.substr(type.find_first_not_of(' '));
    type = type.substr(0, type.find(' '));
    const std::string names = line.substr(1, first - 1);
    for (size_t at = names.find('`'); at != std::string::npos;) {
      const size_t end = names.find('`', at + 1);
      if (end == std::string::npos) break;
      table[names.substr(at + 1, end - at - 1)] = type;
      at = names.find('`', end + 1);
    }
  }
  return table;
}

std::string TypeName(MetricType type) {
  switch (type) {
    case MetricType::Counter:
      return "counter";
    case MetricType::Gauge:
      return "gauge";
    case MetricType::Histogram:
      return "histogram";
    default:
      return "other";
  }
}

// The table of docs/metrics.md is the contract users read: it names every
// family the agent can serve (live, with reconciliation and the cgroup watcher:
// the most families), with its type, and nothing else.
/// Every family a live agent can serve (the live-mode-only ones included).
std::vector<MetricFamily> LiveFamilies() {
  Snapshot live;
  live.reconcile_enabled = true;
  live.learned_cgroups = LearnedCgroupStats{};
  live.metadata_evicted = 0;
  live.queue_priority = QueuePriorityOfRelease("7.3.4+deb13-amd64");
  live.source_drops.prog_skipped_by_program = {{"tp_sys_exit", 0}};
  return BuildFamilies(live);
}

// Whether the kernel applies queue priorities: one series, live only (a
// replay's capture does not say which kernel recorded it).
// The errno label of a failure: the kernel returns -errno, a capture may
// hold any int32, INT32_MIN included (whose negation overflows an int32).
TEST(CollectorTest, ErrnoLabelOfAnyInt32) {
  EXPECT_EQ(ErrnoLabel(-22), "EINVAL");
  EXPECT_EQ(ErrnoLabel(22), "EINVAL");
  EXPECT_EQ(ErrnoLabel(0), "0");
  EXPECT_EQ(ErrnoLabel(-100000), "errno_100000");
  EXPECT_EQ(ErrnoLabel(INT32_MIN), "errno_2147483648");
  EXPECT_EQ(ErrnoLabel(INT32_MAX), "errno_2147483647");
}

TEST(CollectorTest, KernelQueuePriorityInfoIsLiveOnly) {
  Snapshot live;
  live.queue_priority = QueuePriorityOfRelease("7.3.4+deb13-amd64");
  const auto families = BuildFamilies(live);
  const MetricFamily* f = Find(families, "gpuq_kernel_queue_priority_info");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->metric.size(), 1u);
  EXPECT_EQ(LabelsOf(f->metric[0]).at("queue_priority"), "ignored");
  EXPECT_EQ(LabelsOf(f->metric[0]).at("kernel_release"), "7.3.4+deb13-amd64");
  EXPECT_EQ(f->metric[0].gauge.value, 1);
  EXPECT_EQ(Find(BuildFamilies(Snapshot{}), "gpuq_kernel_queue_priority_info"),
            nullptr);
}

TEST(CollectorTest, ReadmeMetricTableIsWhatTheAgentServes) {
  std::map<std::string, std::string> served;
  for (const MetricFamily& f : LiveFamilies())
    served[f.name] = TypeName(f.type);
  const std::map<std::string, std::string> readme = ReadmeMetricTable();
  ASSERT_GT(readme.size(), 30u) << "docs/metrics.md's metric table not found";
  for (const auto& [name, type] : served) {
    auto row = readme.find(name);
    if (row == readme.end()) {
      ADD_FAILURE() << name << " is served but not in docs/metrics.md's table";
    } else {
      EXPECT_EQ(row->second, type) << name << "'s type in docs/metrics.md";
    }
  }
  for (const auto& [name, type] : readme) {
    EXPECT_TRUE(served.count(name))
        << name << " is in docs/metrics.md's table but never served";
  }
}

/// Every family docs/probe-tiers.md's "What each tier gives" section names
/// (its table and the list of families no tier changes): each `gpuq_...`
/// in backquotes, a label selector cut off.
std::set<std::string> ProbeTierDocFamilies() {
  std::ifstream doc(std::string(GPUQ_SOURCE_DIR) + "/docs/probe-tiers.md");
  std::set<std::string> names;
  bool in_section = false;
  for (std::string line; std::getline(doc, line);) {
    if (line.rfind("## ", 0) == 0 || line.rfind("### ", 0) == 0) {
      in_section = line == "## What each tier gives";
      continue;
    }
    if (!in_section) continue;
    for (size_t at = line.find("`gpuq_"); at != std::string::npos;
         at = line.find("`gpuq_", at + 1)) {
      const size_t end = line.find_first_of("`{", at + 1);
      if (end == std::string::npos) break;
      names.insert(line.substr(at + 1, end - at - 1));
    }
  }
  return names;
}

TEST(CollectorTest, ProbeTierTableNamesEveryServedFamily) {
  std::set<std::string> served;
  for (const MetricFamily& f : LiveFamilies()) served.insert(f.name);
  const std::set<std::string> doc = ProbeTierDocFamilies();
  ASSERT_GT(doc.size(), 30u)
      << "docs/probe-tiers.md's \"What each tier gives\" not found";
  for (const std::string& name : served) {
    EXPECT_TRUE(doc.count(name))
        << name << " is served but docs/probe-tiers.md does not say which "
        << "tiers give it";
  }
  for (const std::string& name : doc) {
    EXPECT_TRUE(served.count(name))
        << name << " is in docs/probe-tiers.md but never served";
  }
}

TEST(CollectorTest, FamilyNamesFollowPrometheusConventions) {
  const auto families = ScenarioFamilies();
  std::set<std::string> seen;
  for (const MetricFamily& f : families) {
    EXPECT_EQ(f.name.rfind("gpuq_", 0), 0u) << f.name;
    const bool total = f.name.size() > 6 &&
                       f.name.compare(f.name.size() - 6, 6, "_total") == 0;
    if (f.type == MetricType::Counter) {
      EXPECT_TRUE(total) << "counter without _total: " << f.name;
    } else if (f.type == MetricType::Histogram) {
      // Durations, in the base unit.
      EXPECT_EQ(f.name.compare(f.name.size() - 8, 8, "_seconds"), 0) << f.name;
    } else {
      EXPECT_EQ(f.type, MetricType::Gauge) << f.name;
      EXPECT_FALSE(total) << "gauge named like a counter: " << f.name;
    }
    EXPECT_FALSE(f.help.empty()) << f.name;
    EXPECT_TRUE(seen.insert(f.name).second) << "duplicate family " << f.name;
  }
  for (const char* name :
       {"gpuq_queues", "gpuq_queue_creates_total", "gpuq_queue_destroys_total",
        "gpuq_processes", "gpuq_process_exits_total",
        "gpuq_queue_create_failures_total", "gpuq_container_info",
        "gpuq_gpu_info", "gpuq_events_total", "gpuq_events_dropped_total",
        "gpuq_cgroups_unresolved_total", "gpuq_source_info",
        "gpuq_build_info"}) {
    EXPECT_EQ(seen.count(name), 1u) << "missing " << name;
  }
}

TEST(CollectorTest, LabelNamesPerFamily) {
  const auto families = ScenarioFamilies();
  using Names = std::vector<std::string>;
  const Names queue = {"container", "pod", "namespace", "gpu_id", "queue_type"};
  const std::map<std::string, Names> expected = {
      {"gpuq_queues", queue},
      {"gpuq_queue_creates_total", queue},
      {"gpuq_queue_destroys_total",
       {"container", "pod", "namespace", "gpu_id", "queue_type", "reason"}},
      {"gpuq_processes", {"container", "pod", "namespace", "gpu_id"}},
      {"gpuq_process_exits_total", {"container", "pod", "namespace"}},
      {"gpuq_queue_create_failures_total",
       {"container", "pod", "namespace", "gpu_id", "error"}},
      {"gpuq_events_total", {"type"}},
      {"gpuq_events_dropped_total", {"reason"}},
      {"gpuq_source_info", {"source"}},
      {"gpuq_cgroups_unresolved_total", {}},
  };
  for (const auto& [name, names] : expected) {
    const MetricFamily* f = Find(families, name);
    ASSERT_NE(f, nullptr) << name;
    ASSERT_FALSE(f->metric.empty()) << name;
    for (const ClientMetric& m : f->metric) {
      EXPECT_EQ(LabelNames(m), names) << name;
    }
  }
  // Info families: checked as sets, the join keys are what matters.
  const MetricFamily* gpu = Find(families, "gpuq_gpu_info");
  ASSERT_NE(gpu, nullptr);
  for (const ClientMetric& m : gpu->metric) {
    const Names got = LabelNames(m);
    const std::set<std::string> names(got.begin(), got.end());
    for (const char* l :
         {"gpu_id", "gpu_index", "gpu_partition_id", "kfd_node", "name", "gfx",
          "gfx_target_version", "pci", "unique_id", "vendor_id", "device_id",
          "drm_render_minor"}) {
      EXPECT_EQ(names.count(l), 1u) << l;
    }
  }
  const MetricFamily* container = Find(families, "gpuq_container_info");
  ASSERT_NE(container, nullptr);
  ASSERT_FALSE(container->metric.empty());
  for (const ClientMetric& m : container->metric) {
    const Names got = LabelNames(m);
    const std::set<std::string> names(got.begin(), got.end());
    for (const char* l : {"container", "pod", "namespace", "container_id",
                          "runtime", "pod_uid"}) {
      EXPECT_EQ(names.count(l), 1u) << l;
    }
  }
}

TEST(CollectorTest, AttributionOfDockerHostAndUnknownCgroups) {
  const auto families = ScenarioFamilies();
  // Docker: the container label is the first 12 hex digits of the id.
  EXPECT_EQ(One(families, "gpuq_queues",
                Plus(kDocker, {{"gpu_id", "11437"}, {"queue_type", "sdma"}})),
            1);
  // Host: empty container label, not "unresolved".
  EXPECT_EQ(One(families, "gpuq_queues",
                Plus(kHost, {{"gpu_id", "23710"}, {"queue_type", "compute"}})),
            1);
  // No path for the cgroup id: "unresolved".
  EXPECT_EQ(One(families, "gpuq_queues",
                {{"container", "unresolved"},
                 {"gpu_id", "23710"},
                 {"queue_type", "sdma"}}),
            1);
  EXPECT_EQ(One(families, "gpuq_cgroups_unresolved_total", {}), 1);
}

TEST(CollectorTest, QueueValues) {
  const auto families = ScenarioFamilies();
  const LabelMap docker_compute =
      Plus(kDocker, {{"gpu_id", "11437"}, {"queue_type", "compute"}});
  EXPECT_EQ(One(families, "gpuq_queues", docker_compute), 1);
  EXPECT_EQ(One(families, "gpuq_queue_creates_total", docker_compute), 2);
  EXPECT_EQ(One(families, "gpuq_queue_destroys_total",
                Plus(docker_compute, {{"reason", "ioctl"}})),
            1);
  EXPECT_EQ(One(families, "gpuq_queue_destroys_total",
                Plus(docker_compute, {{"reason", "process_exit"}})),
            0);

  const LabelMap k8s_compute =
      Plus(kK8s, {{"gpu_id", "11437"}, {"queue_type", "compute"}});
  EXPECT_EQ(One(families, "gpuq_queues", k8s_compute), 0);
  EXPECT_EQ(One(families, "gpuq_queue_creates_total", k8s_compute), 1);
  EXPECT_EQ(One(families, "gpuq_queue_destroys_total",
                Plus(k8s_compute, {{"reason", "process_exit"}})),
            1);

  // Totals: docker 2 + k8s 0 + host 1 + unknown 1 = 4 live; creates docker 3
  // + k8s 1 + host 1 + unknown 1 = 6; destroys docker 1 + k8s 1 = 2.
  EXPECT_EQ(Sum(families, "gpuq_queues"), 4);
  EXPECT_EQ(Sum(families, "gpuq_queue_creates_total"), 6);
  EXPECT_EQ(Sum(families, "gpuq_queue_destroys_total"), 2);

  EXPECT_EQ(
      One(families, "gpuq_processes", Plus(kDocker, {{"gpu_id", "11437"}})), 1);
  EXPECT_EQ(One(families, "gpuq_processes", Plus(kHost, {{"gpu_id", "23710"}})),
            1);
  // The k8s process is gone with its last queue.
  EXPECT_EQ(Count(families, "gpuq_processes", kK8s), 0u);
  EXPECT_EQ(Sum(families, "gpuq_processes"), 3);

  EXPECT_EQ(One(families, "gpuq_process_exits_total", kK8s), 1);
  EXPECT_EQ(Sum(families, "gpuq_process_exits_total"), 1);
}

TEST(CollectorTest, DestroysHaveIoctlAndProcessExitSeriesEvenWhenZero) {
  // Counters exist before they move, so rate() sees the first increment.
  auto pipeline = OfflinePipeline();
  pipeline->Handle(PathRecord(kCgHost, "/user.slice"));
  pipeline->Handle(Create(kKeyD, 400, kCgHost, kGpu2, 0, GPUQ_QUEUE_COMPUTE));
  const auto families = BuildFamilies(pipeline->TakeSnapshot());
  const LabelMap labels =
      Plus(kHost, {{"gpu_id", "23710"}, {"queue_type", "compute"}});
  EXPECT_EQ(One(families, "gpuq_queue_destroys_total",
                Plus(labels, {{"reason", "ioctl"}})),
            0);
  EXPECT_EQ(One(families, "gpuq_queue_destroys_total",
                Plus(labels, {{"reason", "process_exit"}})),
            0);
  EXPECT_EQ(One(families, "gpuq_queue_creates_total", labels), 1);
}

TEST(CollectorTest, OutOfRangeDestroyReasonIsExportedAsUnknown) {
  auto pipeline = OfflinePipeline();
  pipeline->Handle(PathRecord(kCgHost, "/user.slice"));
  pipeline->Handle(Create(kKeyD, 400, kCgHost, kGpu2, 0, GPUQ_QUEUE_COMPUTE));
  pipeline->Handle(
      Destroy(kKeyD, 400, kCgHost, kGpu2, 0, GPUQ_QUEUE_COMPUTE, 42));
  const auto families = BuildFamilies(pipeline->TakeSnapshot());
  EXPECT_EQ(
      One(families, "gpuq_queue_destroys_total",
          Plus(kHost, {{"queue_type", "compute"}, {"reason", "unknown"}})),
      1);
}

TEST(CollectorTest, TwoCgroupsOfOneContainerAreSummed) {
  // A nested cgroup below the container's scope is the same container: one
  // series per label set, values added.
  auto pipeline = OfflinePipeline();
  pipeline->Handle(PathRecord(kCgDocker, kDockerPath));
  pipeline->Handle(PathRecord(kCgDockerNested, kDockerPath + "/app"));
  pipeline->Handle(Create(kKeyA, 100, kCgDocker, kGpu1, 0, GPUQ_QUEUE_COMPUTE));
  pipeline->Handle(
      Create(kKeyB, 101, kCgDockerNested, kGpu1, 0, GPUQ_QUEUE_COMPUTE));
  pipeline->Handle(
      Create(kKeyB, 101, kCgDockerNested, kGpu1, 1, GPUQ_QUEUE_COMPUTE));
  pipeline->Handle(Exit(kKeyA, 100, kCgDocker));
  pipeline->Handle(Exit(kKeyB, 101, kCgDockerNested));
  const auto families = BuildFamilies(pipeline->TakeSnapshot());

  const LabelMap labels =
      Plus(kDocker, {{"gpu_id", "11437"}, {"queue_type", "compute"}});
  EXPECT_EQ(Count(families, "gpuq_queues", kDocker), 1u);
  EXPECT_EQ(One(families, "gpuq_queues", labels), 3);
  EXPECT_EQ(One(families, "gpuq_queue_creates_total", labels), 3);
  EXPECT_EQ(
      One(families, "gpuq_processes", Plus(kDocker, {{"gpu_id", "11437"}})), 2);
  EXPECT_EQ(One(families, "gpuq_process_exits_total", kDocker), 2);
}

TEST(CollectorTest, ContainerInfoIsOnePerContainer) {
  // An info metric is 1 per label set, even when two cgroups (a scope and a
  // cgroup nested below it) map to the container: joins such as
  //   gpuq_queues * on(container) group_left(pod_uid) gpuq_container_info
  // would otherwise double the queues.
  auto pipeline = OfflinePipeline();
  pipeline->Handle(PathRecord(kCgDocker, kDockerPath));
  pipeline->Handle(PathRecord(kCgDockerNested, kDockerPath + "/app"));
  pipeline->Handle(Create(kKeyA, 100, kCgDocker, kGpu1, 0, GPUQ_QUEUE_COMPUTE));
  pipeline->Handle(
      Create(kKeyB, 101, kCgDockerNested, kGpu1, 0, GPUQ_QUEUE_COMPUTE));
  const auto families = BuildFamilies(pipeline->TakeSnapshot());
  EXPECT_EQ(Count(families, "gpuq_container_info"), 1u);
  EXPECT_EQ(One(families, "gpuq_container_info", kDocker), 1);
}

TEST(CollectorTest, ContainerInfoCarriesIdsOfContainersOnly) {
  const auto families = ScenarioFamilies();
  EXPECT_EQ(One(families, "gpuq_container_info",
                {{"container", "0124dd351391"},
                 {"container_id", kDockerId},
                 {"runtime", "docker"},
                 {"pod_uid", ""}}),
            1);
  EXPECT_EQ(One(families, "gpuq_container_info",
                {{"container", "f14ff07ef228"},
                 {"container_id", kK8sId},
                 {"runtime", "containerd"},
                 {"pod_uid", kCollectorPodUid}}),
            1);
  // Host and unresolved cgroups are not containers.
  EXPECT_EQ(Count(families, "gpuq_container_info"), 2u);
  EXPECT_EQ(Count(families, "gpuq_container_info", {{"container", ""}}), 0u);
  EXPECT_EQ(
      Count(families, "gpuq_container_info", {{"container", "unresolved"}}),
      0u);
}

TEST(CollectorTest, EventsTotalHasEveryTypeInitialised) {
  auto pipeline = OfflinePipeline();
  pipeline->Handle(PathRecord(kCgHost, "/user.slice"));
  pipeline->Handle(Create(kKeyD, 400, kCgHost, kGpu2, 0, GPUQ_QUEUE_COMPUTE));
  pipeline->Handle(Create(kKeyD, 400, kCgHost, kGpu2, 1, GPUQ_QUEUE_COMPUTE));
  const auto families = BuildFamilies(pipeline->TakeSnapshot());
  const MetricFamily* f = Find(families, "gpuq_events_total");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->type, MetricType::Counter);
  const std::map<std::string, double> expected = {
      {"queue_create", 2},        {"queue_destroy", 0},  {"process_exit", 0},
      {"queue_create_failed", 0}, {"gpu_info", 0},       {"cgroup_path", 1},
      {"container_meta", 0},      {"runlist", 0},        {"eviction", 0},
      {"queue_sample", 0},        {"doorbell_count", 0}, {"queue_update", 0},
      {"queue_cu_mask", 0},       {"source_drops", 0},   {"process_knobs", 0}};
  std::map<std::string, double> got;
  for (const ClientMetric& m : f->metric) {
    got[LabelsOf(m).at("type")] = m.counter.value;
  }
  EXPECT_EQ(got, expected);
}

TEST(CollectorTest, EventsDroppedTotalHasEveryReason) {
  SourceDrops source_drops;
  source_drops.ringbuf_full = 5;
  source_drops.map_full = 4;
  source_drops.decode_error = 3;
  source_drops.prog_skipped = 6;
  source_drops.kfd_exit_skipped = 2;
  source_drops.args_unreadable = 8;
  auto pipeline = OfflinePipeline(
      std::make_unique<FakeEventSource>(std::vector<Event>{}, source_drops));
  // One unknown-queue destroy and one duplicate create.
  pipeline->Handle(Destroy(kKeyA, 100, kCgHost, kGpu1, 9, 0, 1));
  pipeline->Handle(Create(kKeyA, 100, kCgHost, kGpu1, 0, GPUQ_QUEUE_COMPUTE));
  pipeline->Handle(Create(kKeyA, 100, kCgHost, kGpu1, 0, GPUQ_QUEUE_COMPUTE));
  // What the doorbell poller's full maps lost (monotonic total: set, not
  // added).
  pipeline->SetDoorbellMapFull(2);
  pipeline->SetDoorbellMapFull(7);
  const auto families = BuildFamilies(pipeline->TakeSnapshot());
  const MetricFamily* f = Find(families, "gpuq_events_dropped_total");
  ASSERT_NE(f, nullptr);
  std::map<std::string, double> got;
  for (const ClientMetric& m : f->metric) {
    got[LabelsOf(m).at("reason")] = m.counter.value;
  }
  const std::map<std::string, double> expected = {
      {"ringbuf_full", 5},     {"map_full", 4},         {"decode_error", 3},
      {"prog_skipped", 6},     {"kfd_exit_skipped", 2}, {"args_unreadable", 8},
      {"unknown_queue", 1},    {"duplicate_create", 1}, {"no_owner", 0},
      {"doorbell_map_full", 7}};
  EXPECT_EQ(got, expected);

  // A quiet agent still exports every reason, at 0.
  const auto quiet = BuildFamilies(OfflinePipeline()->TakeSnapshot());
  const MetricFamily* q = Find(quiet, "gpuq_events_dropped_total");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->metric.size(), expected.size());
  for (const ClientMetric& m : q->metric) EXPECT_EQ(m.counter.value, 0);
}

// Each program's skipped runs under its kernel name; the family's sum is
// prog_skipped. A source that counts none (a capture) has no such family.
TEST(CollectorTest, ProgramSkippedRunsAreThePerProgramCounts) {
  SourceDrops source_drops;
  source_drops.prog_skipped = 9;
  source_drops.prog_skipped_by_program = {
      {"tp_sys_enter", 2}, {"tp_sys_exit", 7}, {"tp_sched_proces", 0}};
  auto pipeline = OfflinePipeline(
      std::make_unique<FakeEventSource>(std::vector<Event>{}, source_drops));
  const auto families = BuildFamilies(pipeline->TakeSnapshot());
  const MetricFamily* f = Find(families, "gpuq_program_skipped_runs_total");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->type, MetricType::Counter);
  std::map<std::string, double> got;
  for (const ClientMetric& m : f->metric) {
    got[LabelsOf(m).at("program")] = m.counter.value;
  }
  const std::map<std::string, double> expected = {
      {"tp_sys_enter", 2}, {"tp_sys_exit", 7}, {"tp_sched_proces", 0}};
  EXPECT_EQ(got, expected);

  const auto quiet = BuildFamilies(OfflinePipeline()->TakeSnapshot());
  EXPECT_EQ(Find(quiet, "gpuq_program_skipped_runs_total"), nullptr);
}

bool HasReconcileFamily(const std::vector<MetricFamily>& families) {
  for (const MetricFamily& f : families) {
    if (f.name.rfind("gpuq_reconcile_", 0) == 0) return true;
  }
  return false;
}

TEST(CollectorTest, ReconcileFamiliesOnlyWhenReconcileEnabled) {
  // Replay never reconciles: its families would be a lie.
  EXPECT_FALSE(HasReconcileFamily(ScenarioFamilies()));

  Snapshot s;
  s.source = "bpf";
  s.reconcile_enabled = true;
  s.reconcile.runs = 12;
  s.reconcile.errors = 2;
  s.reconcile.added = 3;
  s.reconcile.removed = 1;
  s.reconcile.drift_per_gpu = {{kGpu1, -2}, {kGpu2, 1}};
  const auto families = BuildFamilies(s);
  ASSERT_TRUE(HasReconcileFamily(families));
  EXPECT_EQ(One(families, "gpuq_reconcile_runs_total", {}), 12);
  EXPECT_EQ(One(families, "gpuq_reconcile_errors_total", {}), 2);
  EXPECT_EQ(
      One(families, "gpuq_reconcile_corrections_total", {{"action", "added"}}),
      3);
  EXPECT_EQ(One(families, "gpuq_reconcile_corrections_total",
                {{"action", "removed"}}),
            1);
  // Drift is signed: model minus sysfs.
  EXPECT_EQ(One(families, "gpuq_reconcile_drift_queues", {{"gpu_id", "11437"}}),
            -2);
  EXPECT_EQ(One(families, "gpuq_reconcile_drift_queues", {{"gpu_id", "23710"}}),
            1);

  s.reconcile_enabled = false;
  EXPECT_FALSE(HasReconcileFamily(BuildFamilies(s)));
}

TEST(CollectorTest, GpuInfoLabels) {
  auto pipeline = OfflinePipeline();
  pipeline->Handle(GpuInfo(kGpu1, 1, 90402, 0x0500));
  pipeline->Handle(GpuInfo(64512, 8, 90010, 0xf500));
  const auto families = BuildFamilies(pipeline->TakeSnapshot());
  EXPECT_EQ(Count(families, "gpuq_gpu_info"), 2u);
  EXPECT_EQ(One(families, "gpuq_gpu_info",
                {{"gpu_id", "11437"},
                 {"gpu_index", "0"},  // bus 05 before bus f5: amd-smi's order
                 {"gpu_partition_id", "0"},
                 {"kfd_node", "1"},
                 {"name", "gfx942"},
                 {"gfx", "gfx942"},
                 {"gfx_target_version", "90402"},
                 {"pci", "0000:05:00.0"},
                 {"unique_id", "14932154706911069082"},  // 0xcf39ab978c9c839a
                 {"vendor_id", "0x1002"},
                 {"device_id", "0x74a1"},
                 {"drm_render_minor", "128"}}),
            1);
  EXPECT_EQ(One(families, "gpuq_gpu_info",
                {{"gpu_id", "64512"},
                 {"gpu_index", "1"},
                 {"gfx", "gfx90a"},
                 {"pci", "0000:f5:00.0"}}),
            1);
}

TEST(CollectorTest, GfxName) {
  EXPECT_EQ(GfxName(90402), "gfx942");
  EXPECT_EQ(GfxName(90010), "gfx90a");
  EXPECT_EQ(GfxName(110000), "gfx1100");
  EXPECT_EQ(GfxName(100300), "gfx1030");
  // gfx1250 (MI450): KFD maps GC 12.1.0 to 120500 (the amd-gfx patch
  // "drm/amdkfd: Add GFX 12.1.0 support in KFD")
  EXPECT_EQ(GfxName(120500), "gfx1250");
  EXPECT_EQ(GfxName(90012), "gfx90c");
  EXPECT_EQ(GfxName(0), "");
}

TEST(CollectorTest, QueueTypeAndDestroyReasonLabels) {
  EXPECT_EQ(QueueTypeLabel(GPUQ_QUEUE_COMPUTE), "compute");
  EXPECT_EQ(QueueTypeLabel(GPUQ_QUEUE_SDMA), "sdma");
  EXPECT_EQ(QueueTypeLabel(GPUQ_QUEUE_HIQ), "hiq");
  EXPECT_EQ(QueueTypeLabel(GPUQ_QUEUE_DIQ), "diq");
  EXPECT_EQ(QueueTypeLabel(GPUQ_QUEUE_SDMA_XGMI), "sdma_xgmi");
  EXPECT_EQ(QueueTypeLabel(GPUQ_QUEUE_SDMA_BY_ENG_ID), "sdma_by_eng_id");
  EXPECT_EQ(QueueTypeLabel(GPUQ_QUEUE__MAX), "type_6");
  EXPECT_EQ(QueueTypeLabel(42), "type_42");

  EXPECT_EQ(DestroyReasonLabel(GPUQ_DESTROY_UNKNOWN), "unknown");
  EXPECT_EQ(DestroyReasonLabel(GPUQ_DESTROY_IOCTL), "ioctl");
  EXPECT_EQ(DestroyReasonLabel(GPUQ_DESTROY_PROCESS_EXIT), "process_exit");
  EXPECT_EQ(DestroyReasonLabel(GPUQ_DESTROY__MAX), "unknown");
}

TEST(CollectorTest, CreateFailureLabels) {
  const auto families = ScenarioFamilies();
  // -12 is ENOMEM; GPU2 is in the topology.
  EXPECT_EQ(One(families, "gpuq_queue_create_failures_total",
                Plus(kHost, {{"gpu_id", "23710"}, {"error", "ENOMEM"}})),
            1);
  // User space may name any gpu_id: unknown ones do not become label values.
  EXPECT_EQ(One(families, "gpuq_queue_create_failures_total",
                Plus(kHost, {{"gpu_id", "unknown"}, {"error", "EINVAL"}})),
            1);
  EXPECT_EQ(
      Count(families, "gpuq_queue_create_failures_total", {{"gpu_id", "4242"}}),
      0u);
}

TEST(CollectorTest, SourceAndBuildInfo) {
  auto fake =
      OfflinePipeline(std::make_unique<FakeEventSource>(std::vector<Event>{}));
  const auto families = BuildFamilies(fake->TakeSnapshot());
  EXPECT_EQ(One(families, "gpuq_source_info", {{"source", "fake"}}), 1);
  EXPECT_EQ(One(families, "gpuq_build_info", {{"abi_version", "1"}}), 1);

  // Without an event source only sysfs feeds the model.
  const auto sysfs = BuildFamilies(OfflinePipeline()->TakeSnapshot());
  EXPECT_EQ(One(sysfs, "gpuq_source_info", {{"source", "sysfs"}}), 1);
}

TEST(CollectorTest, MetadataEvictionsOnlyWithAResolver) {
  Snapshot s;
  auto named = [](const std::vector<MetricFamily>& families) {
    return std::count_if(
        families.begin(), families.end(), [](const MetricFamily& f) {
          return f.name == "gpuq_container_metadata_evicted_total";
        });
  };
  EXPECT_EQ(named(BuildFamilies(s)), 0);  // replay, --no-runtime-lookup
  s.metadata_evicted = 7;
  const auto families = BuildFamilies(s);
  EXPECT_EQ(named(families), 1);
  EXPECT_EQ(One(families, "gpuq_container_metadata_evicted_total", {}), 7);
}

TEST(CollectorTest, ProbeAttached) {
  Snapshot s;
  s.probes = {{"queue_create", "pqm_create_queue", "fentry", true, "",
               "lifecycle", "btf-fentry"},
              {"queue_destroy", "pqm_destroy_queue", "none", false, "absent",
               "lifecycle", "none"},
              {"process_exit", "kfd_process_notifier_release", "kprobe", true,
               "", "lifecycle", "args-kprobe"}};
  const auto families = BuildFamilies(s);
  EXPECT_EQ(One(families, "gpuq_probe_attached",
                {{"probe", "queue_create"},
                 {"mode", "fentry"},
                 {"tier", "btf-fentry"}}),
            1);
  EXPECT_EQ(
      One(families, "gpuq_probe_attached",
          {{"probe", "queue_destroy"}, {"mode", "none"}, {"tier", "none"}}),
      0);
  EXPECT_EQ(One(families, "gpuq_probe_attached",
                {{"probe", "process_exit"},
                 {"mode", "kprobe"},
                 {"tier", "args-kprobe"}}),
            1);
}

TEST(CollectorTest, EmptySnapshotHasNoQueueSeries) {
  const auto families = BuildFamilies(Snapshot{});
  EXPECT_EQ(Count(families, "gpuq_queues"), 0u);
  EXPECT_EQ(Count(families, "gpuq_processes"), 0u);
  EXPECT_EQ(Count(families, "gpuq_container_info"), 0u);
  EXPECT_EQ(One(families, "gpuq_cgroups_unresolved_total", {}), 0);
}

TEST(CollectorTest, OutputIsDeterministic) {
  auto pipeline = OfflinePipeline();
  for (const Event& e : Scenario()) pipeline->Handle(e);
  const Snapshot s = pipeline->TakeSnapshot();
  prometheus::TextSerializer serializer;
  const std::string first = serializer.Serialize(BuildFamilies(s));
  EXPECT_EQ(serializer.Serialize(BuildFamilies(s)), first);

  // The attributions map is unordered: the same content inserted in another
  // order, with another bucket count, must still give the same output.
  Snapshot shuffled = s;
  std::vector<std::pair<uint64_t, Attribution>> items(s.attributions.begin(),
                                                      s.attributions.end());
  std::reverse(items.begin(), items.end());
  shuffled.attributions.clear();
  shuffled.attributions.rehash(97);
  for (auto& item : items) shuffled.attributions.insert(item);
  EXPECT_EQ(serializer.Serialize(BuildFamilies(shuffled)), first);
  // The labels the exports read are an unordered map too.
  ASSERT_FALSE(s.labels.empty());
  std::vector<std::pair<uint64_t, SeriesLabels>> labels(s.labels.begin(),
                                                        s.labels.end());
  std::reverse(labels.begin(), labels.end());
  shuffled.labels.clear();
  shuffled.labels.rehash(97);
  for (auto& item : labels) shuffled.labels.insert(item);
  EXPECT_EQ(serializer.Serialize(BuildFamilies(shuffled)), first);

  // And a second pipeline fed the same events agrees.
  auto again = OfflinePipeline();
  for (const Event& e : Scenario()) again->Handle(e);
  EXPECT_EQ(serializer.Serialize(BuildFamilies(again->TakeSnapshot())), first);
}

}  // namespace
}  // namespace gpuq::collector_test
