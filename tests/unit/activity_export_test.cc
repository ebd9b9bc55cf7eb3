// Submissions, doorbells, runlist and evictions through the pipeline and the
// one export path: the families BuildFamilies makes of samples, doorbell
// counts, runlist and eviction records, what --once renders of them, and
// Handle() from several threads.
#include <gpuq/abi.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "activity_builders.h"
#include "export/collector.h"
#include "export/once_render.h"
#include "metric_matchers.h"
#include "model/pipeline.h"

namespace gpuq::activity_export_test {
namespace {

using prometheus::MetricFamily;

const std::string kDockerPath =
    "/system.slice/docker-"
    "0124dd351391c6c45121cf43714d956032a91aee4fa3fa9ed0cf6b58d62b9307.scope";
constexpr uint64_t kCg = 5861;
constexpr uint64_t kCgHost = 4127;
constexpr uint32_t kGpu = 11437;
constexpr uint32_t kGpu2 = 23710;
constexpr uint64_t kKey = 0xffff88811d208000ull;
constexpr uint64_t kKeyHost = 0xffff888110e1b800ull;
constexpr uint32_t kPid = 31200;
constexpr uint32_t kPidHost = 2817;
constexpr uint64_t kHandle = 0x7e0000201000ull;
constexpr uint64_t kSec = 1000000000ull;

std::unique_ptr<Pipeline> Offline() {
  PipelineOptions options;
  options.use_sysfs = false;
  auto p = std::make_unique<Pipeline>(options, nullptr);
  p->Handle(GpuInfo(kGpu, 1));
  p->Handle(GpuInfo(kGpu2, 2, 90402, 0x1500));
  p->Handle(PathRecord(kCg, kDockerPath));
  p->Handle(PathRecord(kCgHost, "/user.slice"));
  return p;
}

// A docker worker submitting on GPU 1 with one SDMA queue, a host process
// evicted on GPU 2, runlist operations of known and unknown cause.
std::unique_ptr<Pipeline> Busy() {
  auto p = Offline();
  p->Handle(RocrCreate(kKey, kPid, kCg, kGpu, 0, kHandle));
  p->Handle(Create(kKey, kPid, kCg, kGpu, 1, GPUQ_QUEUE_SDMA));
  p->Handle(Sample(kKey, kPid, kCg, kGpu, 0, 100, 90, 1 * kSec));
  p->Handle(Sample(kKey, kPid, kCg, kGpu, 0, 600, 596, 3 * kSec));
  p->Handle(DoorbellCount(kPid, kCg, kHandle, kGpu, 40, 2, 3));
  p->Handle(DoorbellCount(kPidHost, kCgHost, 0xabc000, 0, 5));
  p->Handle(Runlist(kKey, kPid, kCg, kGpu, GPUQ_RUNLIST_UNMAP,
                    GPUQ_CAUSE_CREATE, 200000));
  p->Handle(Runlist(kKey, kPid, kCg, kGpu, GPUQ_RUNLIST_MAP, GPUQ_CAUSE_CREATE,
                    1000));
  p->Handle(Runlist(0, 0, 0, kGpu, GPUQ_RUNLIST_UNMAP, GPUQ_CAUSE_UNKNOWN,
                    9500000000ull, -62, 1));
  p->Handle(RocrCreate(kKeyHost, kPidHost, kCgHost, kGpu2, 0, kHandle));
  p->Handle(Eviction(kKeyHost, kPidHost, kCgHost, kGpu2, GPUQ_EVICTION_EVICT,
                     GPUQ_TRIGGER_SVM, 1 * kSec));
  return p;
}

TEST(ActivityExportTest, SubmissionFamilies) {
  const auto f = BuildFamilies(Busy()->TakeSnapshot());
  // Docker containers without runtime names are labelled by short id.
  const LabelMap docker = {{"container", "0124dd351391"}, {"gpu_id", "11437"}};
  EXPECT_EQ(One(f, "gpuq_submissions_total", docker), 600);
  EXPECT_EQ(One(f, "gpuq_submissions_total", {{"container", ""}}), 0)
      << "a compute queue not sampled yet exports 0, not nothing";
  EXPECT_EQ(Count(f, "gpuq_submissions_total", {{"queue_type", "sdma"}}), 0u);
  EXPECT_EQ(One(f, "gpuq_queue_pending_packets", docker), 4);
  EXPECT_EQ(Sum(f, "gpuq_sampled_queues"), 1);
  EXPECT_EQ(One(f, "gpuq_queue_samples_total", {{"result", "ok"}}), 2);
}

TEST(ActivityExportTest, DoorbellFamilies) {
  const auto f = BuildFamilies(Busy()->TakeSnapshot());
  EXPECT_EQ(One(f, "gpuq_doorbells_total",
                {{"container", "0124dd351391"}, {"gpu_id", "11437"}}),
            45);
  EXPECT_EQ(One(f, "gpuq_doorbells_total",
                {{"container", ""}, {"gpu_id", "unknown"}}),
            5);
  EXPECT_EQ(One(f, "gpuq_doorbell_packets_total",
                {{"gpu_id", "11437"}, {"packet_type", "barrier"}}),
            2);
  // Every class is exported, so the per-type series sum to the total.
  EXPECT_EQ(Count(f, "gpuq_doorbell_packets_total", {{"gpu_id", "11437"}}), 5u);
  EXPECT_EQ(One(f, "gpuq_doorbell_packets_total",
                {{"gpu_id", "11437"},
                 {"packet_type", "kernel_dispatch"},
                 {"format", "amd_ext"}}),
            3);
  EXPECT_EQ(One(f, "gpuq_doorbell_packets_total",
                {{"gpu_id", "11437"},
                 {"packet_type", "kernel_dispatch"},
                 {"format", "hsa"}}),
            40);
  EXPECT_EQ(Sum(f, "gpuq_doorbell_packets_total"),
            Sum(f, "gpuq_doorbells_total"));
}

TEST(ActivityExportTest, RunlistFamiliesAndHistogramBuckets) {
  const Snapshot s = Busy()->TakeSnapshot();
  const auto f = BuildFamilies(s);
  EXPECT_EQ(One(f, "gpuq_runlist_unmaps_total",
                {{"gpu_id", "11437"}, {"filter", "dynamic_queues"}}),
            1);
  EXPECT_EQ(One(f, "gpuq_runlist_unmaps_total",
                {{"gpu_id", "11437"}, {"filter", "all_queues"}}),
            1);
  EXPECT_EQ(One(f, "gpuq_runlist_failures_total",
                {{"gpu_id", "11437"},
                 {"scheduler", "hws"},
                 {"op", "unmap"},
                 {"error", "ETIME"}}),
            1);
  // The unknown-cause unmap is in no per-container series and resolves no
  // cgroup (cgroup id 0 is never attributed).
  EXPECT_EQ(Sum(f, "gpuq_runlist_operations_total"), 2);
  EXPECT_EQ(
      Count(f, "gpuq_runlist_operations_total", {{"container", "unresolved"}}),
      0u);
  EXPECT_EQ(s.attributions.count(0), 0u);
  EXPECT_EQ(Sum(f, "gpuq_cgroups_unresolved_total"), 0);

  const MetricFamily* h = Find(f, "gpuq_runlist_unmap_duration_seconds");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->type, prometheus::MetricType::Histogram);
  ASSERT_EQ(h->metric.size(), 1u);
  const auto& hist = h->metric[0].histogram;
  EXPECT_EQ(hist.sample_count, 2u);
  EXPECT_DOUBLE_EQ(hist.sample_sum, 9.5002);
  ASSERT_EQ(hist.bucket.size(), RunlistBuckets().size());
  for (const auto& b : hist.bucket) {
    const uint64_t want = b.upper_bound < 2e-4  ? 0
                          : b.upper_bound < 9.5 ? 1
                                                : 2;
    EXPECT_EQ(b.cumulative_count, want) << b.upper_bound;
  }
  const std::string text = prometheus::TextSerializer().Serialize(f);
  EXPECT_NE(text.find("gpuq_runlist_unmap_duration_seconds_bucket{gpu_id="
                      "\"11437\",scheduler=\"hws\",le=\"+Inf\"} 2"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# TYPE gpuq_runlist_unmap_duration_seconds histogram"),
            std::string::npos);
}

TEST(ActivityExportTest, EvictionFamilies) {
  auto p = Busy();
  auto f = BuildFamilies(p->TakeSnapshot());
  const LabelMap host = {{"container", ""}, {"gpu_id", "23710"}};
  EXPECT_EQ(
      One(f, "gpuq_evictions_total", {{"container", ""}, {"trigger", "svm"}}),
      1);
  EXPECT_EQ(One(f, "gpuq_evicted_processes", host), 1);
  EXPECT_EQ(Count(f, "gpuq_eviction_duration_seconds"), 0u)
      << "no duration before the restore";
  p->Handle(Eviction(kKeyHost, kPidHost, kCgHost, kGpu2, GPUQ_EVICTION_RESTORE,
                     GPUQ_TRIGGER_UNKNOWN, 3 * kSec));
  f = BuildFamilies(p->TakeSnapshot());
  EXPECT_EQ(One(f, "gpuq_evicted_processes", host), 0) << "kept at 0";
  EXPECT_EQ(One(f, "gpuq_eviction_restores_total", host), 1);
  const MetricFamily* d = Find(f, "gpuq_eviction_duration_seconds");
  ASSERT_NE(d, nullptr);
  const auto series = Matching(*d, {{"trigger", "svm"}});
  ASSERT_EQ(series.size(), 1u);
  EXPECT_DOUBLE_EQ(series[0]->histogram.sample_sum, 2.0);
}

// An HWS map that read an oversubscribed runlist (3 processes for 2, 25
// compute queues for 24), then the unmap that took it off 2 s later.
TEST(ActivityExportTest, OversubscriptionFamiliesAndOnceTable) {
  auto p = Offline();
  gpuq_runlist_event map =
      Runlist(kKey, kPid, kCg, kGpu, GPUQ_RUNLIST_MAP, GPUQ_CAUSE_CREATE, 1000);
  map.hdr.ts_ns = 1 * kSec;
  map.flags = GPUQ_RUNLIST_F_RUNLIST_READ | GPUQ_RUNLIST_F_OVERSUBSCRIBED;
  map.processes = 3;
  map.compute_queues = 25;
  map.process_limit = 2;
  map.compute_queue_limit = 24;
  p->Handle(map);
  gpuq_runlist_event unmap = Runlist(kKey, kPid, kCg, kGpu, GPUQ_RUNLIST_UNMAP,
                                     GPUQ_CAUSE_DESTROY, 1000);
  unmap.hdr.ts_ns = 3 * kSec + 1000;
  p->Handle(unmap);
  const Snapshot s = p->TakeSnapshot();
  const auto f = BuildFamilies(s);
  const LabelMap gpu = {{"gpu_id", "11437"}};
  EXPECT_EQ(One(f, "gpuq_runlist_oversubscribed", gpu), 1);
  EXPECT_EQ(One(f, "gpuq_runlist_oversubscribed_maps_total",
                {{"gpu_id", "11437"}, {"reason", "processes"}}),
            1);
  EXPECT_EQ(One(f, "gpuq_runlist_oversubscribed_maps_total",
                {{"gpu_id", "11437"}, {"reason", "compute_queues"}}),
            1);
  EXPECT_EQ(One(f, "gpuq_runlist_oversubscribed_maps_total",
                {{"gpu_id", "11437"}, {"reason", "other"}}),
            0);
  EXPECT_DOUBLE_EQ(One(f, "gpuq_runlist_oversubscribed_seconds_total", gpu),
                   2.0);
  EXPECT_EQ(One(f, "gpuq_runlist_entries",
                {{"gpu_id", "11437"}, {"kind", "compute_queues"}}),
            25);
  EXPECT_EQ(One(f, "gpuq_runlist_entry_limit",
                {{"gpu_id", "11437"}, {"kind", "processes"}}),
            2);
  const std::string out = RenderOnce(s, OnceFormat::kTable);
  EXPECT_NE(out.find("RUNLIST (oversubscription"), std::string::npos) << out;
  EXPECT_NE(out.find("3/2"), std::string::npos) << out;
  EXPECT_NE(out.find("25/24"), std::string::npos) << out;
  // The reasons as gpuq_runlist_oversubscribed_maps_total lists them.
  EXPECT_NE(out.find("compute_queues=1 processes=1"), std::string::npos) << out;
  EXPECT_NE(out.find("2.000"), std::string::npos) << out;
  // Without such a map, no table.
  EXPECT_EQ(RenderOnce(Busy()->TakeSnapshot(), OnceFormat::kTable)
                .find("oversubscription"),
            std::string::npos);
}

TEST(ActivityExportTest, OnceTableShowsRatesPendingAndRunlist) {
  const Snapshot s = Busy()->TakeSnapshot();
  // SUBMITTED through UNMAPS: the wide table's.
  const std::string out = RenderOnce(s, OnceFormat::kWide);
  // 500 packets in 2 s between the two samples; every compute queue sampled.
  EXPECT_NE(out.find("600        250.0     4        0          1       0"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("RUNLIST (preemption)"), std::string::npos) << out;
  EXPECT_NE(out.find("unmap:ETIME=1"), std::string::npos) << out;
  EXPECT_NE(out.find("<=10s"), std::string::npos) << out;
}

TEST(ActivityExportTest, OnceJsonCarriesRatesAndHistograms) {
  const Snapshot s = Busy()->TakeSnapshot();
  const auto doc = nlohmann::json::parse(RenderOnce(s, OnceFormat::kJson));
  bool found_gpu = false;
  for (const auto& c : doc["containers"]) {
    for (const auto& g : c["gpus"]) {
      if (c["container"] == "0124dd351391" && g["gpu_id"] == "11437") {
        found_gpu = true;
        EXPECT_EQ(g["submissions"], 600.0);
        EXPECT_EQ(g["submissions_per_second"], 250.0);
        EXPECT_EQ(g["pending_packets"], 4.0);
        EXPECT_EQ(g["runlist_unmaps_caused"], 1.0);
      }
    }
  }
  EXPECT_TRUE(found_gpu) << doc.dump(2);
  bool found_histogram = false;
  for (const auto& m : doc["metrics"]) {
    if (m["name"] != "gpuq_runlist_unmap_duration_seconds") continue;
    found_histogram = true;
    EXPECT_EQ(m["type"], "histogram");
    EXPECT_EQ(m["samples"][0]["count"], 2);
    EXPECT_EQ(m["samples"][0]["buckets"]["+Inf"], 2);
    EXPECT_EQ(m["samples"][0]["buckets"]["10"], 2);
    EXPECT_EQ(m["samples"][0]["buckets"]["9"], 1);
  }
  EXPECT_TRUE(found_histogram);
  for (const auto& p : doc["processes"]) {
    if (p["pid"] == kPid) {
      EXPECT_EQ(p["submissions_per_second"]["11437"], 250.0);
    }
  }
}

TEST(ActivityExportTest, HandleFromSeveralThreads) {
  // The sampler and the doorbell poller call Handle() beside the event loop
  // and scrapes; every record must land exactly once.
  auto p = Offline();
  static constexpr uint32_t kQueues = 8;
  static constexpr uint64_t kRounds = 200;
  for (uint32_t q = 0; q < kQueues; ++q) {
    p->Handle(RocrCreate(kKey, kPid, kCg, kGpu, q, kHandle + q));
  }
  std::vector<std::thread> threads;
  for (uint32_t q = 0; q < kQueues; ++q) {
    threads.emplace_back([&p, q] {
      for (uint64_t r = 1; r <= kRounds; ++r) {
        p->Handle(Sample(kKey, kPid, kCg, kGpu, q, r * 10, r * 10, r * kSec));
        p->Handle(DoorbellCount(kPid, kCg, kHandle + q, kGpu, r));
      }
    });
  }
  threads.emplace_back([&p] {
    for (int i = 0; i < 50; ++i) {
      EXPECT_EQ(p->SampleTargets().size(), kQueues);
      EXPECT_EQ(p->KnownDoorbells().size(), kQueues);
      EXPECT_TRUE(p->FindDoorbell(kPid, kHandle).has_value());
      BuildFamilies(p->TakeSnapshot());
    }
  });
  for (auto& t : threads) t.join();
  const auto f = BuildFamilies(p->TakeSnapshot());
  EXPECT_EQ(Sum(f, "gpuq_submissions_total"), kQueues * kRounds * 10);
  EXPECT_EQ(Sum(f, "gpuq_doorbells_total"), kQueues * kRounds);
  EXPECT_EQ(One(f, "gpuq_queue_samples_total", {{"result", "ok"}}),
            kQueues * kRounds);
}

}  // namespace
}  // namespace gpuq::activity_export_test
