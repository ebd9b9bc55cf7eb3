// Pipeline (model/pipeline.h) in replay mode: the bundled example capture
// replayed to its end must give the end state examples/README.md works out
// by hand. Plus what only the pipeline does: snapshot aggregation of
// processes and recording.
#include "model/pipeline.h"

#include <gpuq/abi.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "common/log.h"
#include "event_builders.h"
#include "export/collector.h"
#include "log_capture.h"
#include "metric_matchers.h"
#include "sources/capture.h"
#include "sources/fake_source.h"
#include "sources/replay_source.h"
#include "test_support.h"

#ifndef GPUQ_SOURCE_DIR
#error "GPUQ_SOURCE_DIR must name the repository root"
#endif

namespace gpuq::pipeline_test {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

const std::string kBundled =
    std::string(GPUQ_SOURCE_DIR) + "/examples/default.gpuqcap";

// examples/README.md
constexpr uint64_t kCgHost = 4127;
constexpr uint64_t kCgVllm = 5861;
constexpr uint64_t kCgTrainer = 6342;
constexpr uint32_t kGpuIds[] = {11437, 23710, 30584, 39261,
                                48090, 52417, 60833, 64512};
constexpr uint32_t kHostGpu = 23710;
constexpr uint32_t kW7900 = 47101;  // the MES GPU, host process only
constexpr uint32_t kTrainerGpu = 11437;
// The capture carries the runtimes' answers (container_meta records): the
// `container` label is the Docker name, and the Kubernetes container name.
const char* const kVllm = "vllm";
const char* const kTrainer = "trainer";

PipelineOptions Offline() {
  PipelineOptions options;
  options.use_sysfs = false;  // replay: no topology, seeding or reconcile
  return options;
}

// Replays `capture` through a fresh pipeline to the end.
std::unique_ptr<Pipeline> Replay(Capture capture,
                                 CaptureWriter* recorder = nullptr) {
  auto pipeline = std::make_unique<Pipeline>(
      Offline(), std::make_unique<ReplayEventSource>(std::move(capture)));
  if (recorder != nullptr) pipeline->RecordTo(recorder);
  EXPECT_TRUE(pipeline->Start().empty());
  std::atomic<bool> stop{false};
  EXPECT_EQ(pipeline->Run(stop, std::nullopt), Pipeline::RunResult::kEof);
  return pipeline;
}

Capture ReadBundled() {
  Capture capture;
  std::string error;
  EXPECT_EQ(ReadCapture(kBundled, &capture, &error), CaptureError::kNone)
      << error;
  return capture;
}

class PipelineReplayTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto pipeline = Replay(ReadBundled());
    snapshot_ = new Snapshot(pipeline->TakeSnapshot());
    families_ = new std::vector<MetricFamily>(BuildFamilies(*snapshot_));
  }
  static void TearDownTestSuite() {
    delete snapshot_;
    delete families_;
    snapshot_ = nullptr;
    families_ = nullptr;
  }
  static Snapshot* snapshot_;
  static std::vector<MetricFamily>* families_;
};
Snapshot* PipelineReplayTest::snapshot_ = nullptr;
std::vector<MetricFamily>* PipelineReplayTest::families_ = nullptr;

TEST_F(PipelineReplayTest, LiveQueues) {
  const auto& f = *families_;
  EXPECT_EQ(Sum(f, "gpuq_queues"), 43);
  EXPECT_EQ(Sum(f, "gpuq_queues", {{"queue_type", "compute"}}), 27);
  EXPECT_EQ(Sum(f, "gpuq_queues", {{"queue_type", "sdma"}}), 16);
  // Per container.
  EXPECT_EQ(Sum(f, "gpuq_queues", {{"container", kVllm}}), 40);
  EXPECT_EQ(Sum(f, "gpuq_queues", {{"container", kTrainer}}), 0);
  EXPECT_EQ(Sum(f, "gpuq_queues", {{"container", ""}}), 3);
  EXPECT_EQ(Sum(f, "gpuq_queues", {{"container", "unresolved"}}), 0);
  EXPECT_EQ(Sum(f, "gpuq_queues", {{"gpu_id", std::to_string(kW7900)}}), 1);
  // Per GPU: node 2 has the host's two queues (ROCr's, PM4) on top of
  // vllm's five.
  for (uint32_t gpu : kGpuIds) {
    const std::string id = std::to_string(gpu);
    const double compute = gpu == kHostGpu ? 5 : 3;
    EXPECT_EQ(Sum(f, "gpuq_queues", {{"gpu_id", id}}), compute + 2) << gpu;
    EXPECT_EQ(
        Sum(f, "gpuq_queues", {{"gpu_id", id}, {"queue_type", "compute"}}),
        compute)
        << gpu;
    EXPECT_EQ(Sum(f, "gpuq_queues", {{"gpu_id", id}, {"queue_type", "sdma"}}),
              2)
        << gpu;
  }
}

TEST_F(PipelineReplayTest, LifecycleCounters) {
  const auto& f = *families_;
  EXPECT_EQ(Sum(f, "gpuq_queue_creates_total"), 54);
  EXPECT_EQ(Sum(f, "gpuq_queue_creates_total", {{"container", kVllm}}), 48);
  EXPECT_EQ(Sum(f, "gpuq_queue_creates_total",
                {{"container", kVllm}, {"queue_type", "compute"}}),
            32);
  EXPECT_EQ(Sum(f, "gpuq_queue_creates_total",
                {{"container", kVllm}, {"queue_type", "sdma"}}),
            16);
  EXPECT_EQ(Sum(f, "gpuq_queue_creates_total", {{"container", kTrainer}}), 3);
  EXPECT_EQ(Sum(f, "gpuq_queue_creates_total", {{"container", ""}}), 3);

  EXPECT_EQ(Sum(f, "gpuq_queue_destroys_total", {{"reason", "ioctl"}}), 9);
  EXPECT_EQ(Sum(f, "gpuq_queue_destroys_total",
                {{"reason", "ioctl"}, {"container", kVllm}}),
            8);
  EXPECT_EQ(Sum(f, "gpuq_queue_destroys_total",
                {{"reason", "ioctl"}, {"container", ""}}),
            1);
  EXPECT_EQ(Sum(f, "gpuq_queue_destroys_total", {{"reason", "process_exit"}}),
            3);
  EXPECT_EQ(Sum(f, "gpuq_queue_destroys_total",
                {{"reason", "process_exit"}, {"container", kTrainer}}),
            3);
  EXPECT_EQ(Sum(f, "gpuq_queue_destroys_total", {{"reason", "unknown"}}), 0);
  EXPECT_EQ(Sum(f, "gpuq_queue_destroys_total"), 12);

  // Check from the README: 53 creates + 1 seeded - 12 destroys = 42 live.
  EXPECT_EQ(Sum(f, "gpuq_queue_creates_total") + 1 -
                Sum(f, "gpuq_queue_destroys_total"),
            Sum(f, "gpuq_queues"));

  EXPECT_EQ(Sum(f, "gpuq_queue_create_failures_total"), 1);
  EXPECT_EQ(Sum(f, "gpuq_queue_create_failures_total",
                {{"container", ""},
                 {"gpu_id", std::to_string(kHostGpu)},
                 {"error", "ENOMEM"}}),
            1);
  EXPECT_EQ(Sum(f, "gpuq_process_exits_total"), 1);
  EXPECT_EQ(Sum(f, "gpuq_process_exits_total", {{"container", kTrainer}}), 1);
}

TEST_F(PipelineReplayTest, PerSeriesTable) {
  // README "Per (cgroup, GPU, type) series", straight from the model. Series
  // are kept per owner process; in this capture each (cgroup, GPU, type) has
  // exactly one owner, so a cell is one series.
  std::map<std::tuple<uint64_t, uint32_t, uint32_t>, QueueSeries> series;
  for (const auto& [key, cell] : snapshot_->queue_series) {
    const auto [it, inserted] = series.emplace(
        std::make_tuple(key.cgroup_id, key.gpu_id, key.queue_type), cell);
    EXPECT_TRUE(inserted) << "two owners in one cell";
  }
  for (uint32_t gpu : kGpuIds) {
    const auto c = series.find({kCgVllm, gpu, GPUQ_QUEUE_COMPUTE});
    ASSERT_NE(c, series.end()) << gpu;
    EXPECT_EQ(c->second.live, 3u) << gpu;
    EXPECT_EQ(c->second.creates, 4u) << gpu;
    EXPECT_EQ(c->second.destroys[GPUQ_DESTROY_IOCTL], 1u) << gpu;
    EXPECT_EQ(c->second.destroys[GPUQ_DESTROY_PROCESS_EXIT], 0u) << gpu;
    const auto s = series.find({kCgVllm, gpu, GPUQ_QUEUE_SDMA});
    ASSERT_NE(s, series.end()) << gpu;
    EXPECT_EQ(s->second.live, 2u) << gpu;
    EXPECT_EQ(s->second.creates, 2u) << gpu;
    EXPECT_EQ(s->second.destroys[GPUQ_DESTROY_IOCTL], 0u) << gpu;
  }
  const auto tc = series.find({kCgTrainer, kTrainerGpu, GPUQ_QUEUE_COMPUTE});
  ASSERT_NE(tc, series.end());
  EXPECT_EQ(tc->second.live, 0u);
  EXPECT_EQ(tc->second.creates, 2u);
  EXPECT_EQ(tc->second.destroys[GPUQ_DESTROY_PROCESS_EXIT], 2u);
  const auto ts = series.find({kCgTrainer, kTrainerGpu, GPUQ_QUEUE_SDMA});
  ASSERT_NE(ts, series.end());
  EXPECT_EQ(ts->second.live, 0u);
  EXPECT_EQ(ts->second.creates, 1u);
  EXPECT_EQ(ts->second.destroys[GPUQ_DESTROY_PROCESS_EXIT], 1u);
  // Host: creates 2, destroys 1 and still 2 live (the seeded one went, the
  // PM4 queue came).
  const auto hc = series.find({kCgHost, kHostGpu, GPUQ_QUEUE_COMPUTE});
  ASSERT_NE(hc, series.end());
  EXPECT_EQ(hc->second.live, 2u);
  EXPECT_EQ(hc->second.creates, 2u);
  EXPECT_EQ(hc->second.destroys[GPUQ_DESTROY_IOCTL], 1u);
  EXPECT_EQ(hc->second.destroys[GPUQ_DESTROY_PROCESS_EXIT], 0u);
  // 8 GPUs x 2 vllm series + 2 trainer + 2 host (GPU 2 and the W7900).
  EXPECT_EQ(series.size(), 20u);
}

TEST_F(PipelineReplayTest, ProcessesHoldingQueues) {
  // 8 vllm workers (one per GPU) and the host process on two GPUs: 10. The
  // trainer is gone.
  const auto& f = *families_;
  EXPECT_EQ(Sum(f, "gpuq_processes"), 10);
  EXPECT_EQ(Sum(f, "gpuq_processes", {{"container", kVllm}}), 8);
  EXPECT_EQ(Sum(f, "gpuq_processes",
                {{"container", ""}, {"gpu_id", std::to_string(kHostGpu)}}),
            1);
  EXPECT_EQ(Sum(f, "gpuq_processes", {{"container", kTrainer}}), 0);
  for (uint32_t gpu : kGpuIds) {
    EXPECT_EQ(Sum(f, "gpuq_processes",
                  {{"container", kVllm}, {"gpu_id", std::to_string(gpu)}}),
              1)
        << gpu;
  }
}

TEST_F(PipelineReplayTest, EventsDropsAndSelfMetrics) {
  const auto& f = *families_;
  EXPECT_EQ(Sum(f, "gpuq_events_total"), 206);
  EXPECT_EQ(Sum(f, "gpuq_events_total", {{"type", "process_knobs"}}), 10);
  EXPECT_EQ(Sum(f, "gpuq_events_total", {{"type", "gpu_info"}}), 9);
  EXPECT_EQ(Sum(f, "gpuq_events_total", {{"type", "cgroup_path"}}), 3);
  EXPECT_EQ(Sum(f, "gpuq_events_total", {{"type", "container_meta"}}), 2);
  EXPECT_EQ(Sum(f, "gpuq_events_total", {{"type", "queue_create"}}), 55);
  EXPECT_EQ(Sum(f, "gpuq_events_total", {{"type", "runlist"}}), 12);
  EXPECT_EQ(Sum(f, "gpuq_events_total", {{"type", "eviction"}}), 6);
  EXPECT_EQ(Sum(f, "gpuq_events_total", {{"type", "queue_sample"}}), 90);
  EXPECT_EQ(Sum(f, "gpuq_events_total", {{"type", "doorbell_count"}}), 4);
  EXPECT_EQ(Sum(f, "gpuq_events_total", {{"type", "queue_destroy"}}), 12);
  EXPECT_EQ(Sum(f, "gpuq_events_total", {{"type", "process_exit"}}), 1);
  EXPECT_EQ(Sum(f, "gpuq_events_total", {{"type", "queue_create_failed"}}), 1);
  // A consistent capture loses nothing and resolves every cgroup.
  EXPECT_EQ(Sum(f, "gpuq_events_dropped_total"), 0);
  EXPECT_EQ(Sum(f, "gpuq_cgroups_unresolved_total"), 0);
  EXPECT_EQ(Sum(f, "gpuq_source_info", {{"source", "replay"}}), 1);
  for (const MetricFamily& family : f) {
    EXPECT_NE(family.name.rfind("gpuq_reconcile_", 0), 0u)
        << "replay does not reconcile: " << family.name;
  }
}

TEST_F(PipelineReplayTest, GpusAndContainers) {
  const auto& f = *families_;
  EXPECT_EQ(Sum(f, "gpuq_gpu_info"), 9);
  EXPECT_EQ(Sum(f, "gpuq_gpu_info", {{"gfx", "gfx1100"}}), 1);
  EXPECT_EQ(Sum(f, "gpuq_gpu_info", {{"gfx", "gfx942"}}), 8);
  EXPECT_EQ(Sum(f, "gpuq_gpu_info",
                {{"gpu_id", "60833"},
                 {"kfd_node", "7"},
                 {"gpu_index", "7"},  // the W7900 (node 9, bus c3) is 6
                 {"gpu_partition_id", "0"},
                 {"pci", "0000:e5:00.0"},
                 {"drm_render_minor", "134"}}),
            1);
  EXPECT_EQ(Sum(f, "gpuq_gpu_info", {{"gpu_id", "47101"}, {"gpu_index", "6"}}),
            1);
  EXPECT_EQ(Sum(f, "gpuq_container_info",
                {{"container", kVllm}, {"runtime", "docker"}}),
            1);
  EXPECT_EQ(Sum(f, "gpuq_container_info",
                {{"container", kTrainer},
                 {"runtime", "containerd"},
                 {"pod_uid", "db3c3553-1e98-4725-809e-8f0d53d633e3"}}),
            1);
  EXPECT_EQ(Sum(f, "gpuq_container_info"), 2);
}

// examples/README.md "Submissions, doorbells, preemption and evictions".
TEST_F(PipelineReplayTest, Submissions) {
  const auto& f = *families_;
  EXPECT_EQ(Sum(f, "gpuq_submissions_total"), 369690);
  for (uint32_t gpu : kGpuIds) {
    EXPECT_EQ(Sum(f, "gpuq_submissions_total",
                  {{"container", kVllm}, {"gpu_id", std::to_string(gpu)}}),
              46000)
        << gpu;
    EXPECT_EQ(Sum(f, "gpuq_queue_pending_packets",
                  {{"container", kVllm}, {"gpu_id", std::to_string(gpu)}}),
              3)
        << gpu;
  }
  EXPECT_EQ(Sum(f, "gpuq_submissions_total", {{"container", kTrainer}}), 1300);
  EXPECT_EQ(Sum(f, "gpuq_submissions_total",
                {{"container", ""}, {"gpu_id", std::to_string(kHostGpu)}}),
            300);
  EXPECT_EQ(Sum(f, "gpuq_submissions_total",
                {{"container", ""}, {"gpu_id", std::to_string(kW7900)}}),
            90);
  EXPECT_EQ(Sum(f, "gpuq_queue_pending_packets"), 29);
  EXPECT_EQ(Sum(f, "gpuq_sampled_queues"), 26);
  EXPECT_EQ(Sum(f, "gpuq_queue_samples_total", {{"result", "ok"}}), 88);
  EXPECT_EQ(Sum(f, "gpuq_queue_samples_total", {{"result", "unreadable"}}), 2);
  EXPECT_EQ(Sum(f, "gpuq_queue_samples_total"), 90);
  // --once rates: rounds 1 and 2 are 4 s apart.
  for (const ProcessRow& p : snapshot_->process_rows) {
    if (p.pid == 2817) {
      EXPECT_DOUBLE_EQ(p.submission_rate_per_gpu.at(kHostGpu), 25.0);
      EXPECT_DOUBLE_EQ(p.submission_rate_per_gpu.at(kW7900), 7.5);
    } else {
      ASSERT_EQ(p.submission_rate_per_gpu.size(), 1u) << p.pid;
      EXPECT_DOUBLE_EQ(p.submission_rate_per_gpu.begin()->second, 4500.0)
          << p.pid;
    }
  }
}

TEST_F(PipelineReplayTest, Doorbells) {
  const auto& f = *families_;
  EXPECT_EQ(Sum(f, "gpuq_doorbells_total"), 2570);
  EXPECT_EQ(One(f, "gpuq_doorbells_total",
                {{"container", kVllm}, {"gpu_id", "11437"}}),
            2500);
  EXPECT_EQ(One(f, "gpuq_doorbells_total",
                {{"container", ""}, {"gpu_id", "unknown"}}),
            70);
  EXPECT_EQ(Sum(f, "gpuq_doorbell_packets_total",
                {{"packet_type", "kernel_dispatch"}}),
            2510);
  EXPECT_EQ(Sum(f, "gpuq_doorbell_packets_total", {{"packet_type", "barrier"}}),
            48);
  EXPECT_EQ(Sum(f, "gpuq_doorbell_packets_total", {{"packet_type", "other"}}),
            10);
  EXPECT_EQ(
      Sum(f, "gpuq_doorbell_packets_total", {{"packet_type", "unreadable"}}),
      2);
}

TEST_F(PipelineReplayTest, RunlistAndEvictions) {
  const auto& f = *families_;
  EXPECT_EQ(Sum(f, "gpuq_runlist_unmaps_total"), 6);
  EXPECT_EQ(Sum(f, "gpuq_runlist_unmaps_total",
                {{"gpu_id", "64512"}, {"filter", "all_queues"}}),
            1);
  EXPECT_EQ(Sum(f, "gpuq_runlist_unmaps_total", {{"scheduler", "mes"}}), 1);
  EXPECT_EQ(One(f, "gpuq_runlist_failures_total",
                {{"gpu_id", "64512"}, {"op", "unmap"}, {"error", "ETIME"}}),
            1);
  EXPECT_EQ(Sum(f, "gpuq_runlist_failures_total"), 1);
  // Ten operations had a known cause; the reset's two are per GPU only.
  EXPECT_EQ(Sum(f, "gpuq_runlist_operations_total"), 10);
  EXPECT_EQ(Sum(f, "gpuq_runlist_operations_total", {{"container", kTrainer}}),
            6);
  EXPECT_EQ(Sum(f, "gpuq_runlist_operations_total",
                {{"container", kVllm}, {"cause", "destroy"}}),
            1);
  EXPECT_EQ(Count(f, "gpuq_runlist_operations_total", {{"cause", "unknown"}}),
            0u);
  EXPECT_EQ(Sum(f, "gpuq_cgroups_unresolved_total"), 0);

  const MetricFamily* unmap = Find(f, "gpuq_runlist_unmap_duration_seconds");
  ASSERT_NE(unmap, nullptr);
  const auto hung = Matching(*unmap, {{"gpu_id", "64512"}});
  ASSERT_EQ(hung.size(), 1u);
  EXPECT_EQ(hung[0]->histogram.sample_count, 2u);
  EXPECT_NEAR(hung[0]->histogram.sample_sum, 9.000412345 + 0.0021, 1e-9);
  for (const auto& b : hung[0]->histogram.bucket) {
    // The reset's 2.1 ms unmap below 9 s, the -ETIME one only from 10 s.
    const uint64_t want = b.upper_bound < 2.1e-3 ? 0
                          : b.upper_bound < 10   ? 1
                                                 : 2;
    EXPECT_EQ(b.cumulative_count, want) << b.upper_bound;
  }

  EXPECT_EQ(Sum(f, "gpuq_evictions_total"), 3);
  EXPECT_EQ(One(f, "gpuq_evictions_total",
                {{"container", kTrainer}, {"trigger", "ttm"}}),
            1);
  EXPECT_EQ(One(f, "gpuq_evictions_total",
                {{"container", kVllm}, {"trigger", "suspend"}}),
            1);
  EXPECT_EQ(One(f, "gpuq_evictions_total",
                {{"container", ""}, {"trigger", "userptr"}}),
            1);
  EXPECT_EQ(Sum(f, "gpuq_eviction_restores_total"), 3);
  EXPECT_EQ(Sum(f, "gpuq_evicted_processes"), 0);
  const MetricFamily* d = Find(f, "gpuq_eviction_duration_seconds");
  ASSERT_NE(d, nullptr);
  double sum = 0;
  for (const auto& m : d->metric) sum += m.histogram.sample_sum;
  EXPECT_NEAR(sum, 0.15 + 2.3 + 0.04, 1e-9);
}

TEST(PipelineTest, ReplayUnderRecordingReproducesTheCapture) {
  // The capture is self-contained (its own cgroup paths and topology), so
  // recording its replay must write the same records and nothing more.
  TempDir dir;
  const std::string path = dir.path() + "/again.gpuqcap";
  std::string error;
  auto writer = CaptureWriter::Create(path, &error, 1700000000000000000ull);
  ASSERT_NE(writer, nullptr) << error;
  Replay(ReadBundled(), writer.get());
  ASSERT_TRUE(writer->Close(&error)) << error;

  Capture again;
  ASSERT_EQ(ReadCapture(path, &again, &error), CaptureError::kNone) << error;
  const Capture original = ReadBundled();
  ASSERT_EQ(again.events.size(), original.events.size());
  for (size_t i = 0; i < original.events.size(); ++i) {
    EXPECT_EQ(Encode(again.events[i]), Encode(original.events[i]))
        << "record " << i + 1;
  }
}

TEST(PipelineTest, TwoProcessesInOneCgroupOnOneGpu) {
  // The processes gauge counts processes per (cgroup, GPU), not queues.
  Pipeline pipeline(Offline(), nullptr);
  pipeline.Handle(Create(0xffff888100001000ull, 100, kCgVllm, 11437, 0));
  pipeline.Handle(Create(0xffff888100001000ull, 100, kCgVllm, 11437, 1));
  pipeline.Handle(Create(0xffff888100002000ull, 101, kCgVllm, 11437, 0));
  pipeline.Handle(Create(0xffff888100002000ull, 101, kCgVllm, 23710, 1));
  const Snapshot s = pipeline.TakeSnapshot();
  EXPECT_EQ(s.processes.at({kCgVllm, 11437}), 2u);
  EXPECT_EQ(s.processes.at({kCgVllm, 23710}), 1u);
  EXPECT_EQ(s.processes.size(), 2u);
}

// A live source the test feeds while the pipeline runs: events pushed are
// handed out in order, and an empty queue is a timeout (not the end).
class ScriptedSource : public EventSource {
 public:
  explicit ScriptedSource(std::deque<Event>* events) : events_(events) {}
  NextStatus Next(Event* out, std::chrono::milliseconds /*timeout*/) override {
    if (events_->empty()) return NextStatus::kTimeout;
    *out = events_->front();
    events_->pop_front();
    return NextStatus::kOk;
  }
  std::string Error() const override { return ""; }
  std::string Name() const override { return "bpf"; }

 private:
  std::deque<Event>* events_;
};

// A sysfs tree under `root` with one compute queue (ring of 4096 bytes) of
// `pid` on `gpu`, and options reading it.
PipelineOptions SysfsWithQueue(TempDir& root, uint32_t pid, uint32_t qid,
                               uint32_t gpu) {
  const std::string queue_dir = "class/kfd/kfd/proc/" + std::to_string(pid) +
                                "/queues/" + std::to_string(qid);
  root.Write(queue_dir + "/gpuid", std::to_string(gpu) + "\n");
  root.Write(queue_dir + "/type", "0\n");
  root.Write(queue_dir + "/size", "4096\n");
  PipelineOptions options;
  options.paths.sysfs = root.path();
  options.paths.procfs = root.File("proc");
  return options;
}

// A destroy racing reconciliation: on 6.1, kfd_procfs_del_queue() removes a
// queue's sysfs entry before the HW destroy and uninit_queue() emit its
// destroy event. Two reconciliation passes see the queue gone, remove it and
// count its destroy (reason unknown); when the late destroy arrives it
// takes the queue's tombstone: no unknown_queue drop, no second destroy, the
// gauge not decremented twice.
TEST(PipelineReconcileTest, LateDestroyOfARemovedQueueCountsNoSecond) {
  TempDir root;
  PipelineOptions options = SysfsWithQueue(root, 4242, 3, 11437);
  options.use_sysfs = true;
  std::deque<Event> events;
  Pipeline pipeline(options, std::make_unique<ScriptedSource>(&events));
  constexpr uint64_t kKey = 0xffff888100004242ull;
  constexpr uint64_t kCg = 777;
  events.push_back(Create(kKey, 4242, kCg, 11437, 3));
  events.push_back(Create(kKey, 4242, kCg, 11437, 4));

  pipeline.ReconcileNow();  // drains both creates; queue 4 is not in sysfs
  std::filesystem::remove_all(root.File("class/kfd/kfd/proc/4242"));
  root.MakeDir("class/kfd/kfd/proc");
  pipeline.ReconcileNow();  // queue 3's sysfs entry is gone, destroy pending
  pipeline.ReconcileNow();
  Snapshot s = pipeline.TakeSnapshot();
  EXPECT_EQ(s.reconcile.removed, 2u) << "both queues removed after 2 passes";
  EXPECT_EQ(s.queue_series.at({kCg, 4242, 11437, GPUQ_QUEUE_COMPUTE}).live, 0u);
  EXPECT_EQ(s.queue_series.at({kCg, 4242, 11437, GPUQ_QUEUE_COMPUTE})
                .destroys[GPUQ_DESTROY_UNKNOWN],
            2u);

  events.push_back(Destroy(kKey, 4242, kCg, 11437, 3, GPUQ_QUEUE_COMPUTE,
                           GPUQ_DESTROY_IOCTL));
  events.push_back(Destroy(kKey, 4242, kCg, 11437, 4, GPUQ_QUEUE_COMPUTE,
                           GPUQ_DESTROY_PROCESS_EXIT));
  pipeline.ReconcileNow();  // drains the late destroys
  s = pipeline.TakeSnapshot();
  const QueueSeries& q =
      s.queue_series.at({kCg, 4242, 11437, GPUQ_QUEUE_COMPUTE});
  EXPECT_EQ(q.live, 0u);
  EXPECT_EQ(q.creates, 2u);
  EXPECT_EQ(q.destroys[GPUQ_DESTROY_UNKNOWN], 2u);
  EXPECT_EQ(q.destroys[GPUQ_DESTROY_IOCTL], 0u);
  EXPECT_EQ(q.destroys[GPUQ_DESTROY_PROCESS_EXIT], 0u);
  EXPECT_EQ(s.model_drops.unknown_queue, 0u);
  // reconciliation's two and the kernel's two
  EXPECT_EQ(s.events_by_type[GPUQ_EV_QUEUE_DESTROY], 4u);
  EXPECT_EQ(s.reconcile.removed, 2u);
  EXPECT_EQ(s.reconcile.added, 0u);

  // A second destroy of the same queue is a real unknown: counted once.
  events.push_back(Destroy(kKey, 4242, kCg, 11437, 3, GPUQ_QUEUE_COMPUTE,
                           GPUQ_DESTROY_IOCTL));
  pipeline.ReconcileNow();
  s = pipeline.TakeSnapshot();
  EXPECT_EQ(s.queue_series.at({kCg, 4242, 11437, GPUQ_QUEUE_COMPUTE})
                .destroys[GPUQ_DESTROY_IOCTL],
            0u);
  EXPECT_EQ(s.model_drops.unknown_queue, 1u);
}

// Each correction is said once, at info, naming the queues (at most three):
// a queue added from sysfs has no ring addresses, so its submissions are
// not sampled, and an operator reading the log should know why.
TEST(PipelineReconcileTest, CorrectionsAreSaidNamingTheirQueues) {
  const LogCapture log;
  TempDir root;
  PipelineOptions options = SysfsWithQueue(root, 4244, 5, 11437);
  std::deque<Event> events;
  Pipeline pipeline(options, std::make_unique<ScriptedSource>(&events));
  // queue 6 was created (its record arrived) but is not in sysfs
  events.push_back(Create(0xffff888100004244ull, 4244, 779, 11437, 6));
  pipeline.ReconcileNow();
  EXPECT_TRUE(log.Lines().empty())
      << "one pass corrects nothing: " << log.Lines()[0];
  pipeline.ReconcileNow();
  EXPECT_EQ(pipeline.TakeSnapshot().reconcile.added, 1u);
  EXPECT_EQ(pipeline.TakeSnapshot().reconcile.removed, 1u);
  EXPECT_EQ(log.Lines(),
            (std::vector<std::string>{
                "gpuq-agent: info: reconciliation: 1 queue(s) in sysfs "
                "that no create record announced, added and counted as "
                "created, without ring addresses (their submissions are not "
                "sampled): pid 4244 queue 5 on GPU 11437",
                "gpuq-agent: info: reconciliation: 1 queue(s) gone from "
                "sysfs with no destroy record, removed and counted as "
                "destroyed (reason unknown): pid 4244 queue 6 on GPU 11437"}));
}

// What reconciliation learns is in the totals and in the recording: a
// queue whose create record was lost is a create, one whose destroy record
// was lost a destroy, and a replay of the capture counts both as the live
// pipeline did.
TEST(PipelineReconcileTest, CorrectionsAreCountedAndRecorded) {
  TempDir root;
  PipelineOptions options = SysfsWithQueue(root, 4245, 5, 11437);
  std::deque<Event> events;
  Pipeline pipeline(options, std::make_unique<ScriptedSource>(&events));
  const std::string path = root.File("rec.gpuqcap");
  std::string error;
  auto writer = CaptureWriter::Create(path, &error, 1700000000000000000ull);
  ASSERT_NE(writer, nullptr) << error;
  pipeline.RecordTo(writer.get());
  // queue 6's create arrived but it is not in sysfs (its destroy was lost);
  // queue 5 is in sysfs and no create announced it (its create was lost)
  events.push_back(Create(0xffff888100004245ull, 4245, 780, 11437, 6));
  pipeline.ReconcileNow();
  pipeline.ReconcileNow();
  const Snapshot live = pipeline.TakeSnapshot();
  pipeline.RecordTo(nullptr);
  ASSERT_TRUE(writer->Close(&error)) << error;

  ASSERT_EQ(live.reconcile.added, 1u);
  ASSERT_EQ(live.reconcile.removed, 1u);
  uint64_t creates = 0;
  uint64_t unknown_destroys = 0;
  uint64_t live_queues = 0;
  for (const auto& [key, q] : live.queue_series) {
    creates += q.creates;
    unknown_destroys += q.destroys[GPUQ_DESTROY_UNKNOWN];
    live_queues += q.live;
  }
  EXPECT_EQ(creates, 2u) << "the recorded create and the recovered one";
  EXPECT_EQ(unknown_destroys, 1u);
  EXPECT_EQ(live_queues, 1u);

  Capture capture;
  ASSERT_EQ(ReadCapture(path, &capture, &error), CaptureError::kNone) << error;
  const Snapshot replayed = Replay(std::move(capture))->TakeSnapshot();
  ASSERT_EQ(replayed.queue_series.size(), live.queue_series.size());
  for (const auto& [key, q] : live.queue_series) {
    const auto again = replayed.queue_series.find(key);
    ASSERT_NE(again, replayed.queue_series.end());
    EXPECT_EQ(again->second.creates, q.creates);
    EXPECT_EQ(again->second.destroys, q.destroys);
    EXPECT_EQ(again->second.live, q.live);
  }
}

// The other direction: a create in flight when sysfs already shows its
// queue. The pass reads sysfs first and drains the source before comparing,
// so the queue is never seeded (no duplicate_create, the create counted).
TEST(PipelineReconcileTest, CreateInFlightAtTheSysfsReadIsNotSeeded) {
  TempDir root;
  PipelineOptions options = SysfsWithQueue(root, 4243, 0, 11437);
  std::deque<Event> events;
  Pipeline pipeline(options, std::make_unique<ScriptedSource>(&events));
  events.push_back(Create(0xffff888100004243ull, 4243, 778, 11437, 0));
  pipeline.ReconcileNow();
  pipeline.ReconcileNow();
  const Snapshot s = pipeline.TakeSnapshot();
  const QueueSeries& q =
      s.queue_series.at({778, 4243, 11437, GPUQ_QUEUE_COMPUTE});
  EXPECT_EQ(q.live, 1u);
  EXPECT_EQ(q.creates, 1u);
  EXPECT_EQ(s.reconcile.added, 0u);
  EXPECT_EQ(s.model_drops.duplicate_create, 0u);
  EXPECT_EQ(s.reconcile.drift_per_gpu.at(11437), 0);
}

TEST(PipelineTest, RunOfFakeSourceEndsAtEof) {
  std::vector<Event> events = {Create(0xffff888100001000ull, 100, 1, 1, 0)};
  Pipeline pipeline(Offline(), std::make_unique<FakeEventSource>(events));
  std::atomic<bool> stop{false};
  EXPECT_EQ(pipeline.Run(stop, std::nullopt), Pipeline::RunResult::kEof);
  const Snapshot s = pipeline.TakeSnapshot();
  EXPECT_EQ(s.source, "fake");
  EXPECT_EQ(s.events_by_type[GPUQ_EV_QUEUE_CREATE], 1u);
  EXPECT_FALSE(s.reconcile_enabled);
}

TEST(PipelineTest, RunStopsWhenAskedBeforeReading) {
  std::vector<Event> events = {Create(0xffff888100001000ull, 100, 1, 1, 0)};
  Pipeline pipeline(Offline(), std::make_unique<FakeEventSource>(events));
  std::atomic<bool> stop{true};
  EXPECT_EQ(pipeline.Run(stop, std::nullopt), Pipeline::RunResult::kStopped);
  EXPECT_EQ(pipeline.TakeSnapshot().events_by_type[GPUQ_EV_QUEUE_CREATE], 0u);
}

}  // namespace
}  // namespace gpuq::pipeline_test
