// The report's analysis core: percentile math, the classification rule,
// timeline buckets and queue lifetimes on small hand-built streams, and the
// bundled capture's figures as examples/README.md works them out by hand.
#include "report/run_analysis.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>

namespace gpuq::report::run_analysis_test {
namespace {

constexpr uint64_t kS = 1000000000ull;
constexpr uint64_t kMs = 1000000ull;
constexpr uint64_t kUs = 1000ull;
constexpr uint64_t kT0 = 1000 * kS;

// ---- Percentiles: nearest rank, exact ----

TEST(DurationStatsTest, EmptyHasNoCount) {
  const DurationStats d = ComputeDurationStats({});
  EXPECT_EQ(d.count, 0u);
  EXPECT_EQ(d.max, 0.0);
}

TEST(DurationStatsTest, OneValueIsEveryPercentile) {
  const DurationStats d = ComputeDurationStats({60 * kUs});
  EXPECT_EQ(d.count, 1u);
  EXPECT_DOUBLE_EQ(d.min, 60e-6);
  EXPECT_DOUBLE_EQ(d.p50, 60e-6);
  EXPECT_DOUBLE_EQ(d.p99, 60e-6);
  EXPECT_DOUBLE_EQ(d.max, 60e-6);
}

TEST(DurationStatsTest, NearestRankOfThree) {
  // Unsorted on purpose. Ranks: p50 ceil(1.5) = 2, p90 ceil(2.7) = 3.
  const DurationStats d =
      ComputeDurationStats({310 * kUs, 120 * kUs, 140 * kUs});
  EXPECT_EQ(d.count, 3u);
  EXPECT_DOUBLE_EQ(d.sum, 570e-6);
  EXPECT_DOUBLE_EQ(d.min, 120e-6);
  EXPECT_DOUBLE_EQ(d.p50, 140e-6);
  EXPECT_DOUBLE_EQ(d.p90, 310e-6);
  EXPECT_DOUBLE_EQ(d.p99, 310e-6);
}

TEST(DurationStatsTest, HundredValuesHitTheirRanks) {
  std::vector<uint64_t> v;
  for (uint64_t i = 100; i >= 1; --i) v.push_back(i * kMs);
  const DurationStats d = ComputeDurationStats(v);
  EXPECT_DOUBLE_EQ(d.p50, 0.050);  // rank 50
  EXPECT_DOUBLE_EQ(d.p90, 0.090);  // rank 90
  EXPECT_DOUBLE_EQ(d.p99, 0.099);  // rank 99
  EXPECT_DOUBLE_EQ(d.max, 0.100);
  EXPECT_DOUBLE_EQ(d.sum, 5.050);
}

TEST(DurationStatsTest, TwoValuesMedianIsTheLower) {
  const DurationStats d = ComputeDurationStats({2100 * kUs, 9000412345ull});
  EXPECT_DOUBLE_EQ(d.p50, 0.0021);  // rank ceil(1.0) = 1
  EXPECT_DOUBLE_EQ(d.p90, 9.000412345);
}

// ---- Classification ----

TEST(ClassifyTest, NoQueues) { EXPECT_EQ(Classify(0, {}), QueueClass::kNone); }

TEST(ClassifyTest, OneQueueEver) {
  EXPECT_EQ(Classify(1, {{11437, 1}}), QueueClass::kSingleQueue);
}

TEST(ClassifyTest, OneQueueMovingBetweenGpusIsStillSingle) {
  // Never two at once, though two GPUs were used one after the other.
  EXPECT_EQ(Classify(1, {{1, 1}, {2, 1}}), QueueClass::kSingleQueue);
}

TEST(ClassifyTest, OnePerGpuOnEight) {
  std::map<uint32_t, uint64_t> per_gpu;
  for (uint32_t g = 1; g <= 8; ++g) per_gpu[g] = 1;
  EXPECT_EQ(Classify(8, per_gpu), QueueClass::kOnePerGpu);
}

TEST(ClassifyTest, TwoOnOneGpuIsMoreThanGpus) {
  EXPECT_EQ(Classify(2, {{1, 2}}), QueueClass::kMoreThanGpus);
}

TEST(ClassifyTest, TwoOnOneGpuAtSomeTimeWinsOverATotalWithinGpus) {
  // The total never exceeded the two GPUs used, but GPU 1 once held two.
  EXPECT_EQ(Classify(2, {{1, 2}, {2, 1}}), QueueClass::kMoreThanGpus);
}

TEST(ClassifyTest, VerdictWords) {
  EXPECT_STREQ(QueueClassVerdict(QueueClass::kSingleQueue), "design fits");
  EXPECT_STREQ(QueueClassVerdict(QueueClass::kOnePerGpu),
               "needs batched suspend/resume");
  EXPECT_STREQ(QueueClassVerdict(QueueClass::kMoreThanGpus),
               "needs selective preemption");
}

// ---- Hand-built streams ----

// A record of `type` at `ts` by python3 process `tgid` in cgroup 1; tgid 0:
// by no process (a reset's runlist operation).
template <typename Record>
Record Of(uint16_t type, uint64_t ts, uint32_t tgid = 10) {
  Record e;
  std::memset(&e, 0, sizeof(e));
  e.hdr.type = type;
  e.hdr.size = sizeof(e);
  e.hdr.ts_ns = ts;
  if (tgid != 0) {
    e.hdr.tgid = tgid;
    e.hdr.cgroup_id = 1;
    e.hdr.process_key = 0xffff888100000000ull + tgid;
  }
  return e;
}

gpuq_queue_create_event Create(uint32_t tgid, uint32_t qid, uint32_t gpu,
                               uint64_t ts, uint32_t flags = 0) {
  gpuq_queue_create_event e;
  std::memset(&e, 0, sizeof(e));
  e.hdr.type = GPUQ_EV_QUEUE_CREATE;
  e.hdr.size = sizeof(e);
  e.hdr.tgid = tgid;
  e.hdr.ts_ns = ts;
  e.hdr.cgroup_id = 1;
  e.hdr.process_key =
      (flags & GPUQ_CREATE_F_SEEDED) != 0 ? 0 : 0xffff888100000000ull + tgid;
  e.gpu_id = gpu;
  e.queue_id = qid;
  e.queue_type = GPUQ_QUEUE_COMPUTE;
  e.flags = flags | GPUQ_CREATE_F_ROCR_LAYOUT;
  std::strcpy(e.comm, "python3");
  return e;
}

gpuq_queue_destroy_event Destroy(uint32_t tgid, uint32_t qid, uint32_t gpu,
                                 uint64_t ts) {
  auto e = Of<gpuq_queue_destroy_event>(GPUQ_EV_QUEUE_DESTROY, ts, tgid);
  e.gpu_id = gpu;
  e.queue_id = qid;
  e.queue_type = GPUQ_QUEUE_COMPUTE;
  e.reason = GPUQ_DESTROY_IOCTL;
  return e;
}

gpuq_queue_sample_record Sample(uint32_t tgid, uint32_t qid, uint32_t gpu,
                                uint64_t ts, uint64_t write, uint64_t read) {
  auto e = Of<gpuq_queue_sample_record>(GPUQ_EV_QUEUE_SAMPLE, ts, tgid);
  e.gpu_id = gpu;
  e.queue_id = qid;
  e.write_index = write;
  e.read_index = read;
  return e;
}

CgroupPathRecord HostPath(uint64_t ts) {
  CgroupPathRecord r;
  std::memset(&r.hdr, 0, sizeof(r.hdr));
  r.hdr.type = GPUQ_EV_CGROUP_PATH;
  r.hdr.ts_ns = ts;
  r.hdr.cgroup_id = 1;
  r.path = "/user.slice";
  return r;
}

RunReport Analyze(const std::vector<Event>& events, double step_s = 1.0) {
  Capture c;
  c.events = events;
  return AnalyzeCapture(c, "test", step_s);
}

TEST(AnalyzerTest, EmptyCaptureHasNoBuckets) {
  const RunReport r = Analyze({});
  EXPECT_EQ(r.records, 0u);
  EXPECT_EQ(r.duration_s, 0.0);
  EXPECT_TRUE(r.timeline.queues_per_gpu.empty());
  EXPECT_EQ(r.classification, QueueClass::kNone);
}

TEST(AnalyzerTest, BucketsSplitAtStepBoundaries) {
  // t = 0, 0.999999999 (bucket 0), 1.0 exactly (bucket 1), 2.5 (bucket 2).
  const RunReport r = Analyze(
      {HostPath(kT0), Create(10, 0, 7, kT0), Create(10, 1, 7, kT0 + kS - 1),
       Destroy(10, 1, 7, kT0 + kS), Destroy(10, 0, 7, kT0 + 2 * kS + kS / 2)});
  EXPECT_DOUBLE_EQ(r.duration_s, 2.5);
  ASSERT_EQ(r.timeline.queues_per_gpu.size(), 1u);
  EXPECT_EQ(r.timeline.queues_per_gpu[0].name, "gpu 7");
  // Live at each bucket's end: 2 after bucket 0, 1 after bucket 1, 0 at end.
  EXPECT_EQ(r.timeline.queues_per_gpu[0].Dense(),
            (std::vector<double>{2, 1, 0}));
  EXPECT_EQ(r.queues_peak, 2u);
  EXPECT_EQ(r.classification, QueueClass::kMoreThanGpus);
}

// A queue never sampled: its owner's rate series spans the run in zeros it
// does not store (a busy node has thousands of them), and the timeline's
// writers still see every bucket.
TEST(AnalyzerTest, UnsampledRateSeriesStoresNoZeros) {
  const RunReport r = Analyze({HostPath(kT0), Create(10, 0, 7, kT0),
                               Destroy(10, 0, 7, kT0 + 2 * kS + kS / 2)});
  ASSERT_EQ(r.timeline.queues_per_gpu.size(), 1u);
  ASSERT_EQ(r.timeline.submission_rate_per_container.size(), 1u);
  const Series& rate = r.timeline.submission_rate_per_container[0];
  EXPECT_TRUE(rate.values.empty());
  EXPECT_EQ(rate.size(), r.timeline.queues_per_gpu[0].size());
  EXPECT_EQ(rate.Dense(), std::vector<double>(rate.size(), 0.0));
  ASSERT_EQ(r.timeline.submission_rate_per_process.size(), 1u);
  EXPECT_TRUE(r.timeline.submission_rate_per_process[0].values.empty());
  EXPECT_EQ(r.timeline.submission_rate_per_process[0].size(), rate.size());
}

TEST(AnalyzerTest, EmptyBucketsCarryLiveQueuesAndZeroRates) {
  const RunReport r =
      Analyze({HostPath(kT0), Create(10, 0, 7, kT0),
               Sample(10, 0, 7, kT0 + kS / 2, 100, 90),
               Sample(10, 0, 7, kT0 + 3 * kS + kS / 2, 400, 400)});
  ASSERT_EQ(r.timeline.queues_per_gpu.size(), 1u);
  EXPECT_EQ(r.timeline.queues_per_gpu[0].Dense(),
            (std::vector<double>{1, 1, 1, 1}));
  ASSERT_EQ(r.timeline.submission_rate_per_container.size(), 1u);
  EXPECT_EQ(r.timeline.submission_rate_per_container[0].name, "(host)");
  // Each sample's packets are spread over the time since the reading
  // before it: 100 over 0 .. 0.5 s, then 300 over 0.5 .. 3.5 s (100 a
  // second, half a second of it in buckets 0 and 3).
  EXPECT_EQ(r.timeline.submission_rate_per_container[0].Dense(),
            (std::vector<double>{150, 100, 100, 50}));
  EXPECT_EQ(r.submissions, 400u);
  EXPECT_DOUBLE_EQ(r.submissions_peak_per_s, 150);
  EXPECT_DOUBLE_EQ(r.submissions_mean_per_s, 400 / 3.5);
  EXPECT_EQ(r.pending_peak, 10u);
  ASSERT_EQ(r.processes.size(), 1u);
  EXPECT_DOUBLE_EQ(r.processes[0].submissions_peak_per_s, 150);
}

// The owner's destroy carries the final write index: the totals (the
// model's) and the queue's row (the report's own) both count the packets
// written after the last sample.
TEST(AnalyzerTest, FinalWriteIndexAtDestroyInTotalsAndQueueRows) {
  gpuq_queue_destroy_event d = Destroy(10, 0, 7, kT0 + 2 * kS);
  d.flags = GPUQ_DESTROY_F_WRITE_INDEX;
  d.write_index = 130;
  const RunReport r = Analyze({HostPath(kT0), Create(10, 0, 7, kT0),
                               Sample(10, 0, 7, kT0 + kS / 2, 100, 100), d});
  EXPECT_EQ(r.submissions, 130u);
  ASSERT_EQ(r.queue_submissions.size(), 1u);
  EXPECT_EQ(r.queue_submissions[0].submissions, 130u);
  EXPECT_EQ(r.queue_submissions[0].samples, 1u);
}

// A read begun before its queue's create (the predecessor's final index, as
// the model's SubmissionsTest case) is counted neither in the totals nor in
// the queue rows.
TEST(AnalyzerTest, AReadBegunBeforeTheQueuesCreateIsNotCounted) {
  gpuq_queue_destroy_event d = Destroy(10, 0, 7, kT0 + 2 * kS);
  d.flags = GPUQ_DESTROY_F_WRITE_INDEX;
  d.write_index = 17;
  gpuq_queue_sample_record raced = Sample(10, 0, 7, kT0 + 2 * kS + 20, 17, 17);
  raced.read_begin_ns = kT0 + 2 * kS - 5;
  gpuq_queue_sample_record next = Sample(10, 0, 7, kT0 + 3 * kS, 3, 3);
  next.read_begin_ns = kT0 + 3 * kS - 100;
  const RunReport r =
      Analyze({HostPath(kT0), Create(10, 0, 7, kT0), d,
               Create(10, 0, 7, kT0 + 2 * kS + 10), raced, next});
  EXPECT_EQ(r.submissions, 20u);
  std::uint64_t rows = 0;
  for (const auto& q : r.queue_submissions) rows += q.submissions;
  EXPECT_EQ(rows, 20u);
}

TEST(AnalyzerTest, HalfSecondStepHalvesBucketsAndDoublesRates) {
  // 100 packets over 0 .. 0.5 s (bucket 0), 50 over 0.5 .. 1.5 s (25 in
  // each of buckets 1 and 2); the last sample's own bucket, 3, is empty.
  const RunReport r = Analyze({HostPath(kT0), Create(10, 0, 7, kT0),
                               Sample(10, 0, 7, kT0 + kS / 2, 100, 100),
                               Sample(10, 0, 7, kT0 + kS + kS / 2, 150, 150)},
                              0.5);
  EXPECT_EQ(r.timeline.submission_rate_per_container[0].Dense(),
            (std::vector<double>{200, 50, 50, 0}));
}

// Found by tests/fuzz/capture_fuzzer: a record stamped years after the
// first made `report` close a 1 s bucket for every second in between (it
// never ended, and ran out of memory). Such a span gets wider buckets.
TEST(AnalyzerTest, TimestampJumpOfCenturiesKeepsTheTimelineBounded) {
  const uint64_t far = kT0 + (uint64_t{1} << 63);  // 292 years later
  const RunReport r =
      Analyze({HostPath(kT0), Create(10, 0, 7, kT0), Destroy(10, 0, 7, far)});
  ASSERT_EQ(r.timeline.queues_per_gpu.size(), 1u);
  EXPECT_LE(r.timeline.queues_per_gpu[0].size(), kMaxTimelineBuckets + 1);
  EXPECT_GE(r.timeline.step_s * kMaxTimelineBuckets,
            static_cast<double>(far - kT0) / kS);
  EXPECT_EQ(r.queues_peak, 1u);
  EXPECT_DOUBLE_EQ(r.duration_s, static_cast<double>(far - kT0) / kS);
}

TEST(AnalyzerTest, TimelineStepWidensOnlyBeyondItsBucketLimit) {
  Capture c;
  c.events = {HostPath(kT0), Create(10, 0, 7, kT0 + kMaxTimelineBuckets * kS)};
  EXPECT_EQ(TimelineStep(c, 1.0), 1.0);  // 4.5 h: still 1 s buckets
  EXPECT_EQ(TimelineStep(c, 0.5), 1.0);
  c.events.push_back(Destroy(10, 0, 7, kT0 + kMaxTimelineBuckets * kS + 1));
  EXPECT_EQ(TimelineStep(c, 1.0), 2.0);
  EXPECT_EQ(TimelineStep(Capture{}, 1.0), 1.0);
}

TEST(AnalyzerTest, SeededQueueStartsAtZeroAndOpenOnesEndAtTheEnd) {
  const RunReport r = Analyze(
      {HostPath(kT0), Create(10, 0, 7, kT0, GPUQ_CREATE_F_SEEDED),
       Create(10, 1, 7, kT0 + 2 * kS), Destroy(10, 0, 7, kT0 + 3 * kS),
       Create(10, 2, 7, kT0 + 4 * kS), Destroy(10, 2, 7, kT0 + 5 * kS)});
  ASSERT_EQ(r.timeline.queue_lifetimes.size(), 3u);
  // Closed in destroy order, open ones last.
  const Slice seeded = r.timeline.LifetimeSlice(r.timeline.queue_lifetimes[0]);
  EXPECT_EQ(seeded.name, "compute queue 0");
  EXPECT_EQ(seeded.track, "pid 10 (python3)");
  EXPECT_DOUBLE_EQ(seeded.start_s, 0);
  EXPECT_DOUBLE_EQ(seeded.duration_s, 3);
  EXPECT_EQ(seeded.args.at("seeded"), "true");
  const Slice closed = r.timeline.LifetimeSlice(r.timeline.queue_lifetimes[1]);
  EXPECT_EQ(closed.name, "compute queue 2");
  EXPECT_DOUBLE_EQ(closed.duration_s, 1);
  const Slice open = r.timeline.LifetimeSlice(r.timeline.queue_lifetimes[2]);
  EXPECT_EQ(open.name, "compute queue 1");
  EXPECT_DOUBLE_EQ(open.start_s, 2);
  EXPECT_DOUBLE_EQ(open.duration_s, 3);
  EXPECT_EQ(open.args.at("end"), "open");
  // Lifetime stats only of queues created and destroyed in the run.
  ASSERT_EQ(r.gpu_queues.size(), 1u);
  EXPECT_EQ(r.gpu_queues[0].lifetime.count, 1u);
  EXPECT_DOUBLE_EQ(r.gpu_queues[0].lifetime.max, 1);
  EXPECT_EQ(r.gpu_queues[0].at_start, 1u);
  EXPECT_EQ(r.gpu_queues[0].created, 2u);
  EXPECT_EQ(r.gpu_queues[0].destroyed, 2u);
  EXPECT_EQ(r.gpu_queues[0].at_end, 1u);
  EXPECT_EQ(r.gpu_queues[0].peak, 2u);
  EXPECT_EQ(r.queues_at_start, 1u);
}

// What reconciliation learned of lost records (capture minor 4): a queue it
// found without its create is created in the run, not at its start, and one
// gone without its destroy is destroyed, as the metrics count them.
TEST(AnalyzerTest, RecoveredQueuesAreCreatedAndDestroyedInTheRun) {
  auto lost_destroy = Destroy(10, 1, 7, kT0 + 4 * kS);
  lost_destroy.reason = GPUQ_DESTROY_UNKNOWN;
  lost_destroy.flags = GPUQ_DESTROY_F_RECOVERED;
  const RunReport r =
      Analyze({HostPath(kT0), Create(10, 0, 7, kT0, GPUQ_CREATE_F_SEEDED),
               Create(10, 1, 7, kT0 + 2 * kS,
                      GPUQ_CREATE_F_SEEDED | GPUQ_CREATE_F_RECOVERED),
               lost_destroy});
  ASSERT_EQ(r.gpu_queues.size(), 1u);
  EXPECT_EQ(r.gpu_queues[0].at_start, 1u);
  EXPECT_EQ(r.gpu_queues[0].created, 1u);
  EXPECT_EQ(r.gpu_queues[0].destroyed, 1u);
  EXPECT_EQ(r.gpu_queues[0].at_end, 1u);
  EXPECT_EQ(r.queues_at_start, 1u);
  EXPECT_EQ(r.queues_created, 1u);
  ASSERT_EQ(r.processes.size(), 1u);
  EXPECT_EQ(r.processes[0].queues_created, 1u);
}

// Queues at high priority, counted as the model classifies them and read at
// bucket ends: one created and destroyed inside a bucket is no peak. A
// cgroup's path record after its first queues moves its counts to the
// container the path names, as the gauges regroup at each read.
TEST(AnalyzerTest, ClassPeaksAreBucketEndCountsUnderTheCurrentContainer) {
  auto high = [](uint32_t qid, uint64_t ts) {
    gpuq_queue_create_event e = Create(10, qid, 7, ts);
    e.priority = 15;
    return e;
  };
  const std::string id =
      "0124dd351391c6c45121cf43714d956032a91aee4fa3fa9ed0cf6b58d62b9307";
  CgroupPathRecord path = HostPath(kT0 + kS + kS / 2);
  path.path = "/system.slice/docker-" + id + ".scope";
  const RunReport r = Analyze(
      {high(0, kT0), high(1, kT0 + kS / 4), Destroy(10, 1, 7, kT0 + kS / 2),
       path, high(2, kT0 + 2 * kS + kS / 2), Create(10, 3, 7, kT0 + 3 * kS)});
  std::map<std::string, uint64_t> peaks;
  for (const ContainerRow& c : r.containers) {
    peaks[c.container_id] = c.high_priority_peak;
  }
  // Bucket 0 ends with queue 0 alone (queue 1 came and went inside it);
  // bucket 2 ends with queues 0 and 2, both the container's by then.
  // (The first key names no container: its row's id is "".)
  EXPECT_EQ(peaks, (std::map<std::string, uint64_t>{{"", 1}, {id, 2}}));
  EXPECT_EQ(r.high_priority_peak, 2u);
}

// A partitioned GPU's row sums its partitions at each moment, not their
// peaks: partition 0's queue is gone before partition 1's comes, so one
// queue at once, and their busiest seconds (100/s in bucket 0, 300/s in
// bucket 2) are not added either.
TEST(AnalyzerTest, PhysicalGpuPeaksSumPartitionsAtOnce) {
  auto gpu = [](uint32_t gpu_id, uint32_t location_id) {
    auto e = Of<gpuq_gpu_info_record>(GPUQ_EV_GPU_INFO, kT0, 0);
    e.gpu_id = gpu_id;
    e.location_id = location_id;  // bus << 8 | device << 3 | function
    std::strcpy(e.name, "gfx942");
    return e;
  };
  const RunReport r =
      Analyze({gpu(7, 0x0500), gpu(8, 0x0501), gpu(9, 0x1500), HostPath(kT0),
               Create(10, 0, 7, kT0), Sample(10, 0, 7, kT0 + kS / 2, 100, 100),
               Destroy(10, 0, 7, kT0 + kS + kS / 2),
               Create(10, 1, 8, kT0 + 2 * kS), Create(10, 2, 9, kT0 + 2 * kS),
               Sample(10, 1, 8, kT0 + 2 * kS + kS / 2, 300, 300)});
  ASSERT_EQ(r.physical_gpus.size(), 2u);
  const PhysicalGpuRow& p = r.physical_gpus[0];
  EXPECT_EQ(p.pci, "0000:05:00");
  EXPECT_EQ(p.gpu_ids, (std::vector<uint32_t>{7, 8}));
  EXPECT_EQ(p.queues_peak, 1u);
  EXPECT_EQ(p.at_end, 1u);
  EXPECT_EQ(p.created, 2u);
  EXPECT_EQ(p.submissions, 400u);
  EXPECT_DOUBLE_EQ(p.peak_per_s, 300);
  EXPECT_EQ(r.physical_gpus[1].pci, "0000:15:00");
  EXPECT_EQ(r.physical_gpus[1].queues_peak, 1u);
  EXPECT_DOUBLE_EQ(r.physical_gpus[1].peak_per_s, 0);
}

// A GPU's info record after its first queue: the queue moves with it to its
// physical GPU.
TEST(AnalyzerTest, PhysicalGpuTakesTheQueuesOfAGpuNamedLate) {
  auto gpu = [](uint32_t gpu_id, uint32_t location_id) {
    auto e = Of<gpuq_gpu_info_record>(GPUQ_EV_GPU_INFO, kT0 + kS, 0);
    e.gpu_id = gpu_id;
    e.location_id = location_id;
    return e;
  };
  const RunReport r =
      Analyze({HostPath(kT0), Create(10, 0, 7, kT0), gpu(7, 0x0500),
               gpu(8, 0x0501), Create(10, 1, 8, kT0 + 2 * kS)});
  ASSERT_EQ(r.physical_gpus.size(), 1u);
  EXPECT_EQ(r.physical_gpus[0].queues_peak, 2u);
}

// A ROCr queue whose destroy was lost (a program the kernel skipped): a new
// queue of its process at the same amd_queue_t replaces it in the model,
// and so in the report (its own copy of the rules kept it live to the end:
// two queues at once, where the exported families said one).
TEST(AnalyzerTest, AQueueWhoseDestroyWasLostEndsWhereTheModelSaysSo) {
  gpuq_queue_create_event first = Create(10, 0, 7, kT0);
  first.write_ptr = 0x7e0000200038ull;
  gpuq_queue_create_event second = Create(10, 1, 7, kT0 + 2 * kS);
  second.write_ptr = first.write_ptr;
  const RunReport r =
      Analyze({HostPath(kT0), first, second, Destroy(10, 1, 7, kT0 + 3 * kS)});
  EXPECT_EQ(r.queues_peak, 1u);
  EXPECT_EQ(r.queues_at_end, 0u);
  ASSERT_EQ(r.gpu_queues.size(), 1u);
  EXPECT_EQ(r.gpu_queues[0].peak, 1u);
  EXPECT_EQ(r.gpu_queues[0].at_end, 0u);
  EXPECT_EQ(r.gpu_queues[0].lifetime.count, 2u);
  ASSERT_EQ(r.timeline.queue_lifetimes.size(), 2u);
  const Slice replaced =
      r.timeline.LifetimeSlice(r.timeline.queue_lifetimes[0]);
  EXPECT_EQ(replaced.name, "compute queue 0");
  EXPECT_EQ(replaced.args.at("end"), "replaced");
  EXPECT_DOUBLE_EQ(replaced.duration_s, 2);
  EXPECT_EQ(
      r.timeline.LifetimeSlice(r.timeline.queue_lifetimes[1]).args.at("end"),
      "ioctl");
  EXPECT_EQ(r.events_dropped_by_reason.at("duplicate_create"), 1u);
}

// amdkfd reuses a queue id once its queue is gone: each queue has its own
// row, in the order they were made, with when.
TEST(AnalyzerTest, AReusedQueueIdHasARowPerQueue) {
  const RunReport r = Analyze(
      {HostPath(kT0), Create(10, 0, 7, kT0 + kS),
       Sample(10, 0, 7, kT0 + 2 * kS, 30, 30), Destroy(10, 0, 7, kT0 + 3 * kS),
       Create(10, 0, 7, kT0 + 4 * kS), Sample(10, 0, 7, kT0 + 5 * kS, 7, 7)});
  ASSERT_EQ(r.queue_submissions.size(), 2u);
  EXPECT_DOUBLE_EQ(r.queue_submissions[0].created_s, 1);
  EXPECT_EQ(r.queue_submissions[0].submissions, 30u);
  EXPECT_DOUBLE_EQ(r.queue_submissions[1].created_s, 4);
  EXPECT_EQ(r.queue_submissions[1].submissions, 7u);
}

// An eviction's row ends with the model's window: a restore gives its
// duration, the process's exit marks it, a repeat gets a row of its own.
TEST(AnalyzerTest, EvictionRowsEndAsTheModelsWindows) {
  auto eviction = [](uint32_t kind, uint64_t ts) {
    auto e = Of<gpuq_eviction_event>(GPUQ_EV_EVICTION, ts);
    e.gpu_id = 7;
    e.kind = kind;
    return e;
  };
  const auto exit =
      Of<gpuq_process_exit_event>(GPUQ_EV_PROCESS_EXIT, kT0 + 5 * kS);
  const RunReport r =
      Analyze({HostPath(kT0), Create(10, 0, 7, kT0),
               eviction(GPUQ_EVICTION_EVICT, kT0 + kS),
               eviction(GPUQ_EVICTION_EVICT, kT0 + kS + kS / 2),
               eviction(GPUQ_EVICTION_RESTORE, kT0 + 2 * kS),
               eviction(GPUQ_EVICTION_EVICT, kT0 + 3 * kS), exit});
  ASSERT_EQ(r.eviction_list.size(), 3u);
  ASSERT_TRUE(r.eviction_list[0].duration_s.has_value());
  EXPECT_DOUBLE_EQ(*r.eviction_list[0].duration_s, 1);
  EXPECT_FALSE(r.eviction_list[1].duration_s.has_value());
  EXPECT_FALSE(r.eviction_list[1].process_exited);
  EXPECT_FALSE(r.eviction_list[2].duration_s.has_value());
  EXPECT_TRUE(r.eviction_list[2].process_exited);
  EXPECT_EQ(r.evictions, 3u);
  EXPECT_EQ(r.restores, 1u);
}

// An unmap by no process (a GPU reset or suspend: no cgroup) preempts the
// queues on the GPU too: its row names no container that caused it.
TEST(AnalyzerTest, APreemptionByNoProcessHasNoCauser) {
  auto runlist = [](uint32_t op, uint64_t ts) {
    auto e = Of<gpuq_runlist_event>(GPUQ_EV_RUNLIST, ts, /*tgid=*/0);
    e.gpu_id = 7;
    e.op = op;
    e.filter = op == GPUQ_RUNLIST_UNMAP ? 2 : 0;
    e.cause = GPUQ_CAUSE_UNKNOWN;
    e.duration_ns = 100 * kUs;
    return e;
  };
  gpuq_queue_create_event active = Create(10, 0, 7, kT0);
  active.ring_address = 0x7e0000100000ull;  // amdkfd's QUEUE_IS_ACTIVE
  active.ring_size = 4096;
  active.percentage = 100;
  const RunReport r =
      Analyze({HostPath(kT0), active, runlist(GPUQ_RUNLIST_MAP, kT0 + kS),
               runlist(GPUQ_RUNLIST_UNMAP, kT0 + 2 * kS),
               runlist(GPUQ_RUNLIST_MAP, kT0 + 3 * kS)});
  ASSERT_EQ(r.preempted_by.size(), 1u);
  EXPECT_EQ(r.preempted_by[0].owner.container, "");
  EXPECT_FALSE(r.preempted_by[0].by.has_value());
  EXPECT_EQ(r.preempted_by[0].preemptions, 1u);
  EXPECT_NEAR(r.preempted_by[0].seconds_off_gpu, 1.0001, 1e-9);
  ASSERT_EQ(r.timeline.off_gpu.size(), 1u);
  EXPECT_EQ(r.timeline.off_gpu[0].args.count("caused_by_container"), 0u);
}

// ---- The bundled capture: examples/README.md's hand-worked figures ----

class DefaultCaptureTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    report_ = new RunReport();
    std::string error;
    ASSERT_TRUE(AnalyzeCaptureFile(
        std::string(GPUQ_SOURCE_DIR) + "/examples/default.gpuqcap", 1.0, false,
        report_, &error))
        << error;
  }
  static void TearDownTestSuite() { delete report_; }
  static const ContainerRow& Container(const std::string& name) {
    for (const ContainerRow& c : report_->containers) {
      if (c.owner.container == name) return c;
    }
    ADD_FAILURE() << "no container " << name;
    static ContainerRow none;
    return none;
  }
  static RunReport* report_;
};
RunReport* DefaultCaptureTest::report_ = nullptr;

TEST_F(DefaultCaptureTest, Headline) {
  const RunReport& r = *report_;
  EXPECT_EQ(r.records, 206u);
  EXPECT_EQ(r.submissions, 369690u);
  EXPECT_EQ(r.queues_at_end, 43u);
  EXPECT_EQ(r.queues_created, 54u);
  EXPECT_EQ(r.queues_destroyed, 12u);
  EXPECT_EQ(r.queues_at_start, 1u);
  EXPECT_EQ(r.unmaps, 6u);
  EXPECT_EQ(r.maps, 6u);
  EXPECT_EQ(r.evictions, 3u);
  EXPECT_EQ(r.restores, 3u);
  EXPECT_EQ(r.create_failures, 1u);
  EXPECT_EQ(r.process_exits, 1u);
  EXPECT_EQ(r.doorbells, 2570u);
  EXPECT_EQ(r.runlist_failures, 1u);
  EXPECT_EQ(r.gpus_in_topology, 9u);
  // 3 host + 48 vllm + 3 trainer live before the first destroy.
  EXPECT_EQ(r.queues_peak, 54u);
  EXPECT_EQ(r.compute_peak, 37u);
  EXPECT_EQ(r.gpus_used, 9u);
  EXPECT_EQ(r.classification, QueueClass::kMoreThanGpus);
  // After round 0: host 5 + vllm (0+1+2+3) x 8 = 53 packets waiting.
  EXPECT_EQ(r.pending_peak, 53u);
}

// examples/README.md: --once's SUBMIT/S is the rate between each queue's
// last two samples (rounds 1 and 2, +11 s and +15 s): vllm 4500/s on each of
// its 8 GPUs, the host 25/s and 7.5/s. The report spreads each sample's
// packets over the time since the reading before it, so the buckets of that
// interval say the same, and the 10 s before it (rounds 0 to 1: 1800/s per
// GPU) are not one bucket of ten seconds' packets.
TEST_F(DefaultCaptureTest, SpreadRatesAgreeWithOnce) {
  const RunReport& r = *report_;
  std::map<std::string, std::vector<double>> by_name;
  for (const Series& s : r.timeline.submission_rate_per_container) {
    by_name[s.name] = s.Dense();
  }
  const std::vector<double>& vllm = by_name["vllm"];
  const std::vector<double>& host = by_name["(host)"];
  ASSERT_EQ(vllm.size(), 16u);
  ASSERT_EQ(host.size(), 16u);
  for (size_t b = 12; b <= 14; ++b) {
    EXPECT_EQ(vllm[b], 8 * 4500.0) << "bucket " << b;
    EXPECT_EQ(host[b], 25.0 + 7.5) << "bucket " << b;
    EXPECT_EQ(by_name["trainer"][b], 0.0) << "bucket " << b;
  }
  // Worker 0's queues are read at the same offsets in rounds 0 and 1, so
  // its interval is 10 s exactly (the other workers' 10 us less each).
  std::vector<double> worker0;
  for (const Series& s : r.timeline.submission_rate_per_process) {
    if (s.name == "pid 31200 (pt_main_thread)") worker0 = s.Dense();
  }
  ASSERT_EQ(worker0.size(), 16u);
  for (size_t b = 2; b <= 10; ++b) {
    EXPECT_EQ(worker0[b], 300.0 + 600.0 + 900.0) << "bucket " << b;
  }
  EXPECT_EQ(worker0[13], 4500.0);
  // The busiest second is the first: each vLLM worker's 10,000 packets
  // between its creates and round 0.
  double busiest = 0;
  size_t at = 0;
  for (size_t b = 0; b < vllm.size(); ++b) {
    const double run = vllm[b] + host[b] + by_name["trainer"][b];
    if (run > busiest) busiest = run, at = b;
  }
  EXPECT_EQ(at, 0u);
  EXPECT_DOUBLE_EQ(r.submissions_peak_per_s, busiest);
  // Spread, the rates still add up to every packet counted.
  double packets = 0;
  for (const auto& [name, values] : by_name) {
    for (double v : values) packets += v * r.timeline.step_s;
  }
  EXPECT_DOUBLE_EQ(packets, static_cast<double>(r.submissions));
}

TEST_F(DefaultCaptureTest, EvictionsPairWithTheirRestores) {
  const RunReport& r = *report_;
  ASSERT_EQ(r.eviction_list.size(), 3u);
  double total = 0;
  for (const EvictionRow& e : r.eviction_list) {
    ASSERT_TRUE(e.duration_s.has_value());
    total += *e.duration_s;
  }
  EXPECT_NEAR(total, 2.49, 1e-9);
  EXPECT_EQ(r.eviction_list[0].trigger, "ttm");
  EXPECT_NEAR(*r.eviction_list[0].duration_s, 0.15, 1e-9);
  EXPECT_EQ(r.eviction_list[1].trigger, "suspend");
  EXPECT_NEAR(*r.eviction_list[1].duration_s, 2.3, 1e-9);
  EXPECT_EQ(r.eviction_list[2].trigger, "userptr");
  EXPECT_EQ(r.eviction_list[2].gpu_id, 47101u);
  EXPECT_EQ(r.timeline.evictions.size(), 3u);
}

TEST_F(DefaultCaptureTest, RunlistPercentiles) {
  const RunReport& r = *report_;
  ASSERT_EQ(r.runlist.size(), 3u);  // 11437 hws, 47101 mes, 64512 hws
  const RunlistRow& g0 = r.runlist[0];
  EXPECT_EQ(g0.gpu_id, 11437u);
  EXPECT_EQ(g0.unmaps, 3u);
  EXPECT_DOUBLE_EQ(g0.unmap.p50, 140e-6);
  EXPECT_DOUBLE_EQ(g0.unmap.max, 310e-6);
  EXPECT_DOUBLE_EQ(g0.map.p50, 90e-6);
  const RunlistRow& w = r.runlist[1];
  EXPECT_EQ(w.gpu_id, 47101u);
  EXPECT_EQ(w.scheduler, "mes");
  EXPECT_EQ(w.unmaps, 1u);
  EXPECT_EQ(w.maps, 2u);
  const RunlistRow& hung = r.runlist[2];
  EXPECT_EQ(hung.gpu_id, 64512u);
  EXPECT_DOUBLE_EQ(hung.unmap.max, 9.000412345);
  EXPECT_EQ(hung.failures.at("unmap:ETIME"), 1u);
  // Every op is a slice, starting duration_ns before its record.
  EXPECT_EQ(r.timeline.runlist_ops.size(), 12u);
}

TEST_F(DefaultCaptureTest, Containers) {
  const ContainerRow& vllm = Container("vllm");
  EXPECT_EQ(vllm.at_end.submissions, 368000u);
  EXPECT_EQ(vllm.processes, 8u);
  EXPECT_EQ(vllm.queues_peak, 48u);
  EXPECT_EQ(vllm.gpus_used, 8u);
  EXPECT_EQ(vllm.at_end.unmaps_caused, 1u);
  EXPECT_EQ(vllm.at_end.evictions, 1u);
  EXPECT_EQ(vllm.classification, QueueClass::kMoreThanGpus);
  const ContainerRow& trainer = Container("trainer");
  EXPECT_EQ(trainer.owner.pod, "trainer-0");
  EXPECT_EQ(trainer.owner.ns, "ml-train");
  EXPECT_EQ(trainer.at_end.submissions, 1300u);
  EXPECT_EQ(trainer.at_end.unmaps_caused, 3u);
  EXPECT_EQ(trainer.process_exits, 1u);
  const ContainerRow& host = Container("");
  EXPECT_EQ(host.at_end.submissions, 390u);
  EXPECT_EQ(host.queues_peak, 3u);
  EXPECT_EQ(host.create_failures, 1u);
  EXPECT_EQ(host.at_end.unmaps_caused, 1u);
  // Two on GPU 23710 at once (the seeded queue and queue 1).
  EXPECT_EQ(host.classification, QueueClass::kMoreThanGpus);
}

// Each process's knobs as its process_knobs record says: read and none set
// ("") for the host process, the variables for the others.
TEST_F(DefaultCaptureTest, ProcessesCarryTheirKnobs) {
  std::map<uint32_t, std::optional<std::string>> knobs;
  for (const ProcessRow& p : report_->processes) knobs[p.pid] = p.knobs;
  ASSERT_EQ(knobs.size(), 10u);
  EXPECT_EQ(knobs.at(2817), std::optional<std::string>(""));
  EXPECT_EQ(knobs.at(48211), std::optional<std::string>("GPU_MAX_HW_QUEUES=2"));
  for (uint32_t i = 0; i < 8; ++i) {
    EXPECT_EQ(knobs.at(31200 + i * 7),
              std::optional<std::string>("HIP_VISIBLE_DEVICES=0,1,2,3,4,5,6,7"))
        << i;
  }
}

// The report's drops are gpuq_events_dropped_total's, reason by reason: a
// destroy of a queue never created and a second create of a live one.
TEST(AnalyzerTest, DropsAreTheExportedFamilysByReason) {
  const RunReport r =
      Analyze({HostPath(kT0), Create(10, 0, 7, kT0), Create(10, 0, 7, kT0 + 1),
               Destroy(10, 5, 7, kT0 + 2)});
  const std::map<std::string, uint64_t> want = {{"duplicate_create", 1},
                                                {"unknown_queue", 1}};
  EXPECT_EQ(r.events_dropped_by_reason, want);
  EXPECT_EQ(r.events_dropped, 2u);
}

}  // namespace
}  // namespace gpuq::report::run_analysis_test
