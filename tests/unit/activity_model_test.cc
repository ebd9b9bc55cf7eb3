// Model rules of submissions, doorbells, runlist and evictions: submissions
// from write-index deltas (baselines, resets), pending packets, rates, doorbell
// counts, runlist operations and eviction/restore pairing, and the
// sampler/poller interfaces.
#include <gpuq/abi.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <utility>

#include "activity_builders.h"
#include "model/histogram.h"
#include "model/model.h"
#include "model_views.h"

// Its own namespace: the unit tests build as one unity translation unit per
// batch (tests/CMakeLists.txt), where its constants met another file's.
namespace gpuq::activity_model_test {
namespace {

constexpr uint64_t kKey = 0xffff88811d208000ull;
constexpr uint64_t kKey2 = 0xffff88811d20a800ull;
constexpr uint32_t kPid = 31200;
constexpr uint32_t kPid2 = 31207;
constexpr uint64_t kCg = 5861;
constexpr uint64_t kCg2 = 6342;
constexpr uint32_t kGpu = 11437;
constexpr uint32_t kGpu2 = 23710;
constexpr uint64_t kHandle = 0x7e0000201000ull;
constexpr uint64_t kSec = 1000000000ull;

uint64_t Submissions(const Model& m, uint64_t cgroup = kCg,
                     uint32_t tgid = kPid, uint32_t gpu = kGpu) {
  const auto all = m.Series().queue_series;
  auto it = all.find({cgroup, tgid, gpu, GPUQ_QUEUE_COMPUTE});
  return it == all.end() ? 0 : it->second.submissions;
}

TEST(SubmissionsTest, RocrQueueCountsFromWriteIndexAtCreate) {
  Model m;
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 0, kHandle, 10));
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 0, 15, 15, 1 * kSec));
  EXPECT_EQ(Submissions(m), 5u);
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 0, 40, 38, 2 * kSec));
  EXPECT_EQ(Submissions(m), 30u);
  EXPECT_EQ(m.Series().sample_stats.ok, 2u);
}

TEST(SubmissionsTest, OtherQueuesStartAtTheirFirstSample) {
  // No ROCr layout (an old capture, a seeded queue): what was written
  // before the first sample is unknown, so it is not counted.
  Model m;
  m.Apply(Create(kKey, kPid, kCg, kGpu, 0));
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 0, 1000, 1000, 1 * kSec));
  EXPECT_EQ(Submissions(m), 0u);
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 0, 1250, 1200, 2 * kSec));
  EXPECT_EQ(Submissions(m), 250u);
}

TEST(SubmissionsTest, WriteIndexGoingBackwardsIsANewBaseline) {
  Model m;
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 0, kHandle));
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 0, 500, 500, 1 * kSec));
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 0, 20, 20, 2 * kSec));  // reset
  EXPECT_EQ(Submissions(m), 500u);
  EXPECT_EQ(m.Series().sample_stats.reset, 1u);
  EXPECT_TRUE(m.SubmissionRates().empty()) << "no rate across a reset";
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 0, 70, 70, 3 * kSec));
  EXPECT_EQ(Submissions(m), 550u);
  EXPECT_EQ(m.Series().sample_stats.ok, 2u);
}

TEST(SubmissionsTest, FirstSampleBelowTheCreateBaselineIsAReset) {
  Model m;
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 0, kHandle, 100));
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 0, 40, 40, 1 * kSec));
  EXPECT_EQ(Submissions(m), 0u);
  EXPECT_EQ(m.Series().sample_stats.reset, 1u);
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 0, 45, 45, 2 * kSec));
  EXPECT_EQ(Submissions(m), 5u);
}

// The owner's destroy carries the final write index (read in its ioctl):
// what it wrote after the sampler's last read is counted, not lost with the
// queue's memory.
TEST(SubmissionsTest, FinalWriteIndexAtDestroyCountsTheRest) {
  Model m;
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 0, kHandle, 10));
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 0, 15, 15, 1 * kSec));
  auto d = Destroy(kKey, kPid, kCg, kGpu, 0, GPUQ_QUEUE_COMPUTE,
                   GPUQ_DESTROY_IOCTL, GPUQ_DESTROY_F_WRITE_INDEX);
  d.write_index = 22;
  m.Apply(d);
  EXPECT_EQ(Submissions(m), 12u);
  // Never sampled: from the index at create.
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 1, kHandle + 64, 100));
  d.queue_id = 1;
  d.write_index = 104;
  m.Apply(d);
  EXPECT_EQ(Submissions(m), 16u);
  // Without the flag (exit teardown, older captures): nothing to add.
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 2, kHandle + 128, 0));
  auto plain = Destroy(kKey, kPid, kCg, kGpu, 2, GPUQ_QUEUE_COMPUTE);
  plain.write_index = 50;
  m.Apply(plain);
  EXPECT_EQ(Submissions(m), 16u);
  // Not a ROCr queue: its index means nothing.
  m.Apply(Create(kKey, kPid, kCg, kGpu, 3));
  d.queue_id = 3;
  d.write_index = 9000;
  m.Apply(d);
  EXPECT_EQ(Submissions(m), 16u);
  // Below the last read: a reset, nothing counted.
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 4, kHandle + 192, 0));
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 4, 30, 30, 2 * kSec));
  d.queue_id = 4;
  d.write_index = 7;
  m.Apply(d);
  EXPECT_EQ(Submissions(m), 46u);
}

TEST(SubmissionsTest, UnreadableAndUnknownSamples) {
  Model m;
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 0, kHandle));
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 0, 10, 4, 1 * kSec));
  EXPECT_EQ(m.SampledQueues(), 1u);
  EXPECT_EQ(m.PendingPackets().at({kCg, kGpu}), 6u);
  // The process went away: nothing counted, and nothing pending any more.
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 0, 0, 0, 2 * kSec, false));
  EXPECT_EQ(m.Series().sample_stats.unreadable, 1u);
  EXPECT_EQ(m.SampledQueues(), 0u);
  EXPECT_TRUE(m.PendingPackets().empty());
  EXPECT_EQ(Submissions(m), 10u);
  // A queue destroyed between the read and the record.
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 7, 10, 4, 3 * kSec));
  EXPECT_EQ(m.Series().sample_stats.unknown_queue, 1u);
  // Denied (no ptrace access): counted apart, the queue unread as above.
  gpuq_queue_sample_record denied =
      Sample(kKey, kPid, kCg, kGpu, 0, 0, 0, 3 * kSec, false);
  denied.flags |= GPUQ_SAMPLE_F_DENIED;
  m.Apply(denied);
  EXPECT_EQ(m.Series().sample_stats.denied, 1u);
  EXPECT_EQ(m.Series().sample_stats.unreadable, 1u);
  EXPECT_EQ(m.SampledQueues(), 0u);
  // A readable sample again resumes from the last readable one.
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 0, 16, 16, 4 * kSec));
  EXPECT_EQ(Submissions(m), 16u);
}

// A read of a queue destroyed since, whose queue_id a new queue at another
// address took: not the new queue's index (it is what the old queue's memory
// held), so nothing is counted and the new queue keeps its baseline.
TEST(SubmissionsTest, SampleOfAnotherAddressIsNotTheQueues) {
  Model m;
  gpuq_queue_create_event moved = RocrCreate(kKey, kPid, kCg, kGpu, 0, kHandle);
  moved.write_ptr += 0x1000000;
  m.Apply(moved);
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 0, 34, 30, 1 * kSec));
  EXPECT_EQ(m.Series().sample_stats.unknown_queue, 1u);
  EXPECT_EQ(m.Series().sample_stats.ok, 0u);
  EXPECT_EQ(m.SampledQueues(), 0u);
  EXPECT_EQ(Submissions(m), 0u);
  gpuq_queue_sample_record own =
      Sample(kKey, kPid, kCg, kGpu, 0, 3, 1, 2 * kSec);
  own.write_ptr = moved.write_ptr;
  m.Apply(own);
  EXPECT_EQ(m.Series().sample_stats.ok, 1u);
  EXPECT_EQ(Submissions(m), 3u);
  // Captures written before samples carried their address: not checked.
  gpuq_queue_sample_record old =
      Sample(kKey, kPid, kCg, kGpu, 0, 5, 5, 3 * kSec);
  old.write_ptr = 0;
  m.Apply(old);
  EXPECT_EQ(Submissions(m), 5u);
}

// A queue whose destroy was lost (a kernel program skipped) while its
// process made a new ROCr queue in the same amd_queue_t: the stale one goes,
// or its samples would read the new queue's index (back to 0, a reset) and
// count the new queue's packets a second time.
TEST(SubmissionsTest, ANewQueueAtTheSameAddressReplacesTheStaleOne) {
  Model m;
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 0, kHandle));
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 0, 30, 30, 1 * kSec));
  gpuq_queue_create_event again =
      RocrCreate(kKey, kPid, kCg, kGpu2, 1, kHandle);
  again.write_ptr = RocrWritePtr(0);
  m.Apply(again);
  EXPECT_EQ(m.Series().model_drops.duplicate_create, 1u);
  EXPECT_EQ(LiveQueues(m).size(), 1u);
  gpuq_queue_sample_record stale =
      Sample(kKey, kPid, kCg, kGpu, 0, 4, 4, 2 * kSec);
  m.Apply(stale);
  EXPECT_EQ(m.Series().sample_stats.unknown_queue, 1u);
  gpuq_queue_sample_record fresh =
      Sample(kKey, kPid, kCg, kGpu2, 1, 4, 4, 2 * kSec);
  fresh.write_ptr = RocrWritePtr(0);
  m.Apply(fresh);
  EXPECT_EQ(m.Series().sample_stats.reset, 0u);
  EXPECT_EQ(Submissions(m), 30u);
  EXPECT_EQ(Submissions(m, kCg, kPid, kGpu2), 4u);
  // Another process's queue at the same address is its own.
  m.Apply(RocrCreate(kKey2, kPid2, kCg, kGpu, 0, kHandle));
  EXPECT_EQ(LiveQueues(m).size(), 2u);
}

// The sampler read queue 0's final index (17), its thread was preempted, and
// before the read's record was stamped the process destroyed the queue (its
// destroy carries the 17) and made a new one: same queue_id, same
// amd_queue_t. Applied after both records, the read would be taken for the
// new queue's: 17 counted twice (CI: 45 for 34). A read that began before its
// queue's create is not that queue's.
TEST(SubmissionsTest, AReadBegunBeforeTheQueuesCreateIsNotItsSample) {
  Model m;
  gpuq_queue_create_event first = RocrCreate(kKey, kPid, kCg, kGpu, 0, kHandle);
  first.hdr.ts_ns = 1 * kSec;
  m.Apply(first);
  gpuq_queue_sample_record early =
      Sample(kKey, kPid, kCg, kGpu, 0, 5, 5, 2 * kSec);
  early.read_begin_ns = 2 * kSec - 100;
  m.Apply(early);
  gpuq_queue_destroy_event gone =
      Destroy(kKey, kPid, kCg, kGpu, 0, GPUQ_QUEUE_COMPUTE);
  gone.hdr.ts_ns = 3 * kSec;
  gone.flags |= GPUQ_DESTROY_F_WRITE_INDEX;
  gone.write_index = 17;
  m.Apply(gone);
  gpuq_queue_create_event again = first;
  again.hdr.ts_ns = 3 * kSec + 10;
  m.Apply(again);
  EXPECT_EQ(Submissions(m), 17u);
  gpuq_queue_sample_record raced =
      Sample(kKey, kPid, kCg, kGpu, 0, 17, 17, 3 * kSec + 20);
  raced.read_begin_ns = 3 * kSec - 5;
  m.Apply(raced);
  EXPECT_EQ(m.Series().sample_stats.unknown_queue, 1u);
  EXPECT_EQ(Submissions(m), 17u);
  // The next read, begun after the create, is the new queue's.
  gpuq_queue_sample_record next =
      Sample(kKey, kPid, kCg, kGpu, 0, 3, 3, 4 * kSec);
  next.read_begin_ns = 4 * kSec - 100;
  m.Apply(next);
  EXPECT_EQ(m.Series().sample_stats.reset, 0u);
  EXPECT_EQ(Submissions(m), 20u);
}

TEST(SubmissionsTest, PendingSumsLiveQueuesAndNeverGoesNegative) {
  Model m;
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 0, kHandle));
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 1, kHandle + 1));
  m.Apply(RocrCreate(kKey2, kPid2, kCg, kGpu2, 0, kHandle));
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 0, 100, 90, 1 * kSec));
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 1, 50, 47, 1 * kSec));
  // Read raced ahead of write: 0, not a wrapped huge number.
  m.Apply(Sample(kKey2, kPid2, kCg, kGpu2, 0, 5, 6, 1 * kSec));
  const auto pending = m.PendingPackets();
  EXPECT_EQ(pending.at({kCg, kGpu}), 13u);
  EXPECT_EQ(pending.at({kCg, kGpu2}), 0u);
  // A destroyed queue no longer counts.
  m.Apply(Destroy(kKey, kPid, kCg, kGpu, 1, GPUQ_QUEUE_COMPUTE));
  EXPECT_EQ(m.PendingPackets().at({kCg, kGpu}), 10u);
  EXPECT_EQ(m.SampledQueues(), 2u);
}

TEST(SubmissionsTest, RateFromTheLastTwoSamplesByRecordTime) {
  Model m;
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 0, kHandle));
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 1, kHandle + 1));
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 0, 100, 100, 1 * kSec));
  EXPECT_TRUE(m.SubmissionRates().empty()) << "one sample is no rate";
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 0, 300, 300, 3 * kSec));
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 0, 400, 400, 3 * kSec + kSec / 2));
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 1, 10, 10, 1 * kSec));
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 1, 30, 30, 5 * kSec));
  // Queue 0: 100 packets in 0.5 s; queue 1: 20 in 4 s.
  EXPECT_DOUBLE_EQ(m.SubmissionRates().at(kKey).at(kGpu), 200.0 + 5.0);
}

TEST(SubmissionsTest, FoldedOwnersKeepTheirSubmissions) {
  Model m;
  m.SetNow(1);
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 0, kHandle));
  m.Apply(Sample(kKey, kPid, kCg, kGpu, 0, 70, 70, 1 * kSec));
  m.Apply(Destroy(kKey, kPid, kCg, kGpu, 0, GPUQ_QUEUE_COMPUTE));
  m.SetNow(1000);
  EXPECT_EQ(m.RetireIdleOwners(10), 1u);
  EXPECT_EQ(Submissions(m, kCg, 0), 70u);
}

TEST(SamplerInterfaceTest, SampleTargetsAreLiveRocrQueues) {
  Model m;
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 0, kHandle));
  m.Apply(Create(kKey, kPid, kCg, kGpu, 1, GPUQ_QUEUE_SDMA));  // not ROCr
  m.Apply(RocrCreate(kKey2, kPid2, kCg2, kGpu2, 3, kHandle));
  const auto targets = m.SampleTargets();
  ASSERT_EQ(targets.size(), 2u);
  EXPECT_EQ(targets[0].owner.tgid, kPid);
  EXPECT_EQ(targets[0].owner.process_key, kKey);
  EXPECT_EQ(targets[0].owner.cgroup_id, kCg);
  EXPECT_EQ(targets[0].gpu_id, kGpu);
  EXPECT_EQ(targets[0].queue_id, 0u);
  EXPECT_EQ(targets[0].write_ptr, 0x7e0000200038ull);
  EXPECT_EQ(targets[0].read_ptr, 0x7e0000200080ull);
  EXPECT_EQ(targets[1].queue_id, 3u);
  m.Apply(Destroy(kKey2, kPid2, kCg2, kGpu2, 3, GPUQ_QUEUE_COMPUTE));
  EXPECT_EQ(m.SampleTargets().size(), 1u);
}

TEST(SamplerInterfaceTest, DoorbellsLearnedAtCreateUntilDestroy) {
  Model m;
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 2, kHandle));
  m.Apply(RocrCreate(kKey2, kPid2, kCg2, kGpu2, 0, kHandle));  // same VA
  const auto owner = m.FindDoorbell(kPid, kHandle);
  ASSERT_TRUE(owner.has_value());
  EXPECT_EQ(owner->owner.process_key, kKey);
  EXPECT_EQ(owner->owner.cgroup_id, kCg);
  EXPECT_EQ(owner->gpu_id, kGpu);
  EXPECT_EQ(owner->queue_id, 2u);
  EXPECT_EQ(m.FindDoorbell(kPid2, kHandle)->gpu_id, kGpu2);
  EXPECT_FALSE(m.FindDoorbell(kPid, kHandle + 8).has_value());
  EXPECT_EQ(m.KnownDoorbells().size(), 2u);
  m.Apply(Destroy(kKey, kPid, kCg, kGpu, 2, GPUQ_QUEUE_COMPUTE));
  EXPECT_FALSE(m.FindDoorbell(kPid, kHandle).has_value());
  ASSERT_EQ(m.KnownDoorbells().size(), 1u);
  EXPECT_EQ(m.KnownDoorbells()[0], std::make_pair(kPid2, kHandle));
}

TEST(DoorbellTest, CumulativeCountsBecomeDeltas) {
  Model m;
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 0, kHandle));
  m.Apply(DoorbellCount(kPid, kCg, kHandle, kGpu, 100, 4));
  m.Apply(DoorbellCount(kPid, kCg, kHandle, kGpu, 160, 5));
  const DoorbellSeries s = m.Series().doorbells.at({kCg, kGpu});
  EXPECT_EQ(s.doorbells, 165u);
  EXPECT_EQ(s.by_packet[GPUQ_PACKET_DISPATCH], 160u);
  EXPECT_EQ(s.by_packet[GPUQ_PACKET_BARRIER], 5u);
}

TEST(DoorbellTest, CountsGoingBackwardsRestartFromZero) {
  // The kernel map entry was recreated: its counts start from 0 again.
  Model m;
  m.Apply(DoorbellCount(kPid, kCg, kHandle, kGpu, 100));
  m.Apply(DoorbellCount(kPid, kCg, kHandle, kGpu, 30));
  EXPECT_EQ(m.Series().doorbells.at({kCg, kGpu}).doorbells, 130u);
}

TEST(DoorbellTest, UnknownHandlesAndMissingGpu) {
  Model m;
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 0, kHandle));
  // The poller did not know the handle yet, the model does: its GPU.
  m.Apply(DoorbellCount(kPid, kCg, kHandle, 0, 10));
  // A pre-existing queue's doorbell: gpu 0 (exported as "unknown").
  m.Apply(DoorbellCount(kPid, kCg, 0x1234000, 0, 7));
  EXPECT_EQ(m.Series().doorbells.at({kCg, kGpu}).doorbells, 10u);
  EXPECT_EQ(m.Series().doorbells.at({kCg, 0}).doorbells, 7u);
  // No cgroup at all: no container series, counted as a loss.
  m.Apply(DoorbellCount(kPid2, 0, 0x5678000, 0, 3));
  EXPECT_EQ(m.Series().doorbells.size(), 2u);
  EXPECT_EQ(m.Series().model_drops.no_owner, 1u);
}

// The last rings of a queue polled after its destroy stay on its GPU and
// container (the poller no longer knows the handle: gpu 0).
TEST(DoorbellTest, RingsPolledAfterTheDestroyKeepTheirGpu) {
  Model m;
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 0, kHandle));
  m.Apply(DoorbellCount(kPid, kCg, kHandle, kGpu, 10));
  m.Apply(Destroy(kKey, kPid, kCg, kGpu, 0, GPUQ_QUEUE_COMPUTE));
  m.Apply(DoorbellCount(kPid, kCg, kHandle, 0, 12));
  EXPECT_EQ(m.Series().doorbells.at({kCg, kGpu}).doorbells, 12u);
  EXPECT_EQ(m.Series().doorbells.count({kCg, 0}), 0u);
  // Never polled while it lived: its destroy still names the GPU.
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu2, 1, kHandle + 64));
  m.Apply(Destroy(kKey, kPid, kCg, kGpu2, 1, GPUQ_QUEUE_COMPUTE));
  m.Apply(DoorbellCount(kPid, kCg, kHandle + 64, 0, 3));
  EXPECT_EQ(m.Series().doorbells.at({kCg, kGpu2}).doorbells, 3u);
  // The handle reused by a new queue on another GPU: the new owner wins.
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu2, 2, kHandle));
  m.Apply(DoorbellCount(kPid, kCg, kHandle, 0, 15));
  EXPECT_EQ(m.Series().doorbells.at({kCg, kGpu2}).doorbells, 6u);
  EXPECT_EQ(m.Series().doorbells.at({kCg, kGpu}).doorbells, 12u);
}

// What a recording started now begins with (DoorbellCounts): the last
// count of each doorbell polled, and of none only named at a create.
TEST(DoorbellTest, CountsToCarryAreThoseOfPolledDoorbells) {
  Model m;
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 0, kHandle));
  EXPECT_TRUE(m.DoorbellCounts().empty());
  m.Apply(DoorbellCount(kPid, kCg, kHandle, kGpu, 10));
  m.Apply(Destroy(kKey, kPid, kCg, kGpu, 0, GPUQ_QUEUE_COMPUTE));
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 1, kHandle + 64));
  const auto counts = m.DoorbellCounts();
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts.at({kPid, kHandle}).doorbells, 10u);
}

// A gone container's doorbells go with it; a live queue's doorbell keeps its
// owner, and its counts start again from the next poll.
TEST(DoorbellTest, EraseCgroupForgetsWhatItsDoorbellsKept) {
  Model m;
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 0, kHandle));
  m.Apply(DoorbellCount(kPid, kCg, kHandle, kGpu, 10));
  m.Apply(Destroy(kKey, kPid, kCg, kGpu, 0, GPUQ_QUEUE_COMPUTE));
  m.Apply(RocrCreate(kKey2, kPid2, kCg2, kGpu2, 0, kHandle));
  m.Apply(DoorbellCount(kPid2, kCg2, kHandle, kGpu2, 20));
  m.EraseCgroup(kCg);
  m.EraseCgroup(kCg2);
  const auto counts = m.DoorbellCounts();
  EXPECT_TRUE(counts.empty());
  // The gone queue's last rings have no owner left to count for.
  m.Apply(DoorbellCount(kPid, 0, kHandle, 0, 12));
  EXPECT_EQ(m.Series().model_drops.no_owner, 1u);
  // The live one still owns its doorbell: 25 rings since its counts went.
  ASSERT_TRUE(m.FindDoorbell(kPid2, kHandle).has_value());
  m.Apply(DoorbellCount(kPid2, 0, kHandle, 0, 25));
  EXPECT_EQ(m.Series().doorbells.at({kCg2, kGpu2}).doorbells, 25u);
}

TEST(RunlistTest, HwsAndMesOperations) {
  Model m;
  m.Apply(Runlist(kKey, kPid, kCg, kGpu, GPUQ_RUNLIST_UNMAP, GPUQ_CAUSE_CREATE,
                  300000));
  m.Apply(Runlist(kKey, kPid, kCg, kGpu, GPUQ_RUNLIST_MAP, GPUQ_CAUSE_CREATE,
                  90000));
  m.Apply(Runlist(kKey, kPid, kCg, kGpu2, GPUQ_RUNLIST_MES_REMOVE,
                  GPUQ_CAUSE_DESTROY, 50000));
  m.Apply(Runlist(kKey, kPid, kCg, kGpu2, GPUQ_RUNLIST_MES_ADD,
                  GPUQ_CAUSE_CREATE, 150000));
  const RunlistSeries hws = m.Series().runlist.at({kGpu, Scheduler::kHws});
  EXPECT_EQ(hws.unmaps_by_filter.at(2), 1u);
  EXPECT_EQ(hws.unmap.count, 1u);
  EXPECT_EQ(hws.map.count, 1u);
  const RunlistSeries mes = m.Series().runlist.at({kGpu2, Scheduler::kMes});
  EXPECT_EQ(mes.unmaps_by_filter.at(0), 1u) << "an MES remove is an unmap";
  EXPECT_EQ(mes.unmap.count, 1u);
  EXPECT_EQ(mes.map.count, 1u) << "an MES add is a map";
  EXPECT_EQ(m.Series().runlist_causes.at(
                {kCg, kGpu2, Scheduler::kMes, true, GPUQ_CAUSE_DESTROY}),
            1u);
  EXPECT_EQ(m.Series().runlist_causes.size(), 4u);
  EXPECT_TRUE(m.Series().runlist_failures.empty());
}

TEST(RunlistTest, TimeoutIsAFailureAndObservedPastNineSeconds) {
  Model m;
  m.Apply(Runlist(kKey, kPid, kCg, kGpu, GPUQ_RUNLIST_UNMAP, GPUQ_CAUSE_DESTROY,
                  9000400000ull, -62));
  EXPECT_EQ(m.Series().runlist_failures.at({kGpu, Scheduler::kHws, true, -62}),
            1u);
  const DurationHistogram h =
      m.Series().runlist.at({kGpu, Scheduler::kHws}).unmap;
  const auto& bounds = RunlistBuckets();
  for (size_t i = 0; i < bounds.size(); ++i) {
    EXPECT_EQ(h.counts[i], bounds[i] == 10 ? 1u : 0u) << bounds[i];
  }
}

TEST(RunlistTest, UnknownCauseCreatesNoContainerSeries) {
  Model m;
  m.Apply(Runlist(0, 0, 0, kGpu, GPUQ_RUNLIST_UNMAP, GPUQ_CAUSE_UNKNOWN,
                  2000000, 0, 1));
  m.Apply(Runlist(0, 0, 0, kGpu, GPUQ_RUNLIST_MAP, GPUQ_CAUSE_UNKNOWN, 400000));
  EXPECT_TRUE(m.Series().runlist_causes.empty());
  EXPECT_TRUE(m.owners().empty());
  const RunlistSeries s = m.Series().runlist.at({kGpu, Scheduler::kHws});
  EXPECT_EQ(s.unmaps_by_filter.at(1), 1u);
  EXPECT_EQ(s.map.count, 1u);
  EXPECT_EQ(m.Series().model_drops.no_owner, 0u)
      << "not a loss: counted per GPU";
}

// A MES op on a queue the agent seeded from sysfs (created before it
// started): the kernel side has no GPU for it (gpu_id 0), the model does.
// Found by the simulator tier (update of a seeded MES queue).
TEST(RunlistTest, MesOpOnASeededQueueTakesTheSeededQueuesGpu) {
  Model m;
  m.Apply(Seeded(kPid, kCg, kGpu2, 5));
  gpuq_runlist_event remove = Runlist(
      kKey, kPid, kCg, 0, GPUQ_RUNLIST_MES_REMOVE, GPUQ_CAUSE_UPDATE, 40000);
  remove.queue_id = 5;
  m.Apply(remove);
  EXPECT_EQ(m.Series().runlist.count({0, Scheduler::kMes}), 0u);
  EXPECT_EQ(m.Series().runlist.at({kGpu2, Scheduler::kMes}).unmap.count, 1u);
  EXPECT_EQ(m.Series().runlist_causes.at(
                {kCg, kGpu2, Scheduler::kMes, true, GPUQ_CAUSE_UPDATE}),
            1u);
  // An unknown queue keeps what the kernel said.
  remove.queue_id = 6;
  m.Apply(remove);
  EXPECT_EQ(m.Series().runlist.at({0, Scheduler::kMes}).unmap.count, 1u);
}

TEST(HistogramTest, BucketBoundsAreInclusive) {
  const std::vector<double> bounds = {1e-6, 1e-3, 1};
  DurationHistogram h;
  h.Observe(bounds, 1e-6);  // le 1e-6
  h.Observe(bounds, 2e-6);  // le 1e-3
  h.Observe(bounds, 1);     // le 1
  h.Observe(bounds, 9.5);   // +Inf
  h.Observe(bounds, 0);     // le 1e-6
  EXPECT_EQ(h.counts, (std::vector<uint64_t>{2, 1, 1, 1}));
  EXPECT_EQ(h.count, 5u);
  EXPECT_DOUBLE_EQ(h.sum_seconds, 1e-6 + 2e-6 + 1 + 9.5);
  // The runlist buckets span 1 us to past the 9 s preemption timeout.
  EXPECT_EQ(RunlistBuckets().front(), 1e-6);
  EXPECT_GT(RunlistBuckets().back(), 9);
}

TEST(EvictionTest, RestoreObservesTheEvictionsDurationAndTrigger) {
  Model m;
  m.Apply(Eviction(kKey, kPid, kCg, kGpu, GPUQ_EVICTION_EVICT, GPUQ_TRIGGER_TTM,
                   10 * kSec));
  EXPECT_EQ(m.EvictedProcesses().at({kCg, kGpu}), 1u);
  // The same process on another GPU is paired on its own.
  m.Apply(Eviction(kKey, kPid, kCg, kGpu2, GPUQ_EVICTION_EVICT,
                   GPUQ_TRIGGER_SVM, 10 * kSec));
  m.Apply(Eviction(kKey, kPid, kCg, kGpu, GPUQ_EVICTION_RESTORE,
                   GPUQ_TRIGGER_UNKNOWN, 10 * kSec + kSec / 4));
  const EvictionSeries ttm =
      m.Series().evictions.at({kCg, kGpu, GPUQ_TRIGGER_TTM});
  EXPECT_EQ(ttm.evictions, 1u);
  EXPECT_EQ(ttm.duration.count, 1u);
  EXPECT_DOUBLE_EQ(ttm.duration.sum_seconds, 0.25);
  EXPECT_EQ(m.Series().restores.at({kCg, kGpu}), 1u);
  EXPECT_EQ(m.EvictedProcesses().count({kCg, kGpu}), 0u);
  EXPECT_EQ(m.EvictedProcesses().at({kCg, kGpu2}), 1u);
  EXPECT_EQ(
      m.Series().evictions.at({kCg, kGpu2, GPUQ_TRIGGER_SVM}).duration.count,
      0u);
}

TEST(EvictionTest, QueuesOfAnEvictedProcessAreEvictedUntilItsRestore) {
  Model m;
  m.Apply(Create(kKey, kPid, kCg, kGpu, 1));
  m.Apply(Create(kKey, kPid, kCg, kGpu, 2, GPUQ_QUEUE_SDMA));
  m.Apply(Create(kKey, kPid, kCg, kGpu2, 3));
  m.Apply(Create(kKey2, kPid2, kCg2, kGpu, 4));
  EXPECT_TRUE(m.Series().queues_evicted.empty());
  // Evicted on kGpu: its two queues there, not its queue on kGpu2 nor the
  // other process's on kGpu (amdkfd's is_evicted is per process and GPU).
  m.Apply(Eviction(kKey, kPid, kCg, kGpu, GPUQ_EVICTION_EVICT, GPUQ_TRIGGER_TTM,
                   1 * kSec));
  using Evicted = std::map<std::pair<uint64_t, uint32_t>, uint64_t>;
  EXPECT_EQ(m.Series().queues_evicted, (Evicted{{{kCg, kGpu}, 2}}));
  // A queue created while its process is evicted is created evicted; one
  // destroyed is gone.
  m.Apply(Create(kKey, kPid, kCg, kGpu, 5));
  m.Apply(Destroy(kKey, kPid, kCg, kGpu, 2, GPUQ_QUEUE_SDMA));
  EXPECT_EQ(m.Series().queues_evicted, (Evicted{{{kCg, kGpu}, 2}}));
  m.Apply(Eviction(kKey, kPid, kCg, kGpu, GPUQ_EVICTION_RESTORE,
                   GPUQ_TRIGGER_UNKNOWN, 2 * kSec));
  EXPECT_TRUE(m.Series().queues_evicted.empty());
  // Evicted again, then its exit takes the queues and the eviction away.
  m.Apply(Eviction(kKey, kPid, kCg, kGpu2, GPUQ_EVICTION_EVICT,
                   GPUQ_TRIGGER_SVM, 3 * kSec));
  EXPECT_EQ(m.Series().queues_evicted, (Evicted{{{kCg, kGpu2}, 1}}));
  m.Apply(Exit(kKey, kPid, kCg));
  EXPECT_TRUE(m.Series().queues_evicted.empty());
}

TEST(EvictionTest, SeededQueuesOfAnEvictedProcessAreEvicted) {
  // Found in sysfs at start (keyed by tgid); the eviction is the first
  // record naming the process's kfd_process.
  Model m;
  m.Apply(Seeded(kPid, kCg, kGpu, 5));
  m.Apply(Eviction(kKey, kPid, kCg, kGpu, GPUQ_EVICTION_EVICT, GPUQ_TRIGGER_TTM,
                   1 * kSec));
  using Evicted = std::map<std::pair<uint64_t, uint32_t>, uint64_t>;
  EXPECT_EQ(m.Series().queues_evicted, (Evicted{{{kCg, kGpu}, 1}}));
  m.Apply(Eviction(kKey, kPid, kCg, kGpu, GPUQ_EVICTION_RESTORE,
                   GPUQ_TRIGGER_UNKNOWN, 2 * kSec));
  EXPECT_TRUE(m.Series().queues_evicted.empty());
}

TEST(EvictionTest, RestoreWithoutEvictionAndOddTriggers) {
  Model m;
  // Evicted before the agent started: the restore counts, no duration.
  m.Apply(Eviction(kKey, kPid, kCg, kGpu, GPUQ_EVICTION_RESTORE,
                   GPUQ_TRIGGER_UNKNOWN, 5 * kSec));
  EXPECT_EQ(m.Series().restores.at({kCg, kGpu}), 1u);
  EXPECT_TRUE(m.Series().evictions.empty());
  // A trigger value from a newer kernel is "unknown".
  m.Apply(Eviction(kKey, kPid, kCg, kGpu, GPUQ_EVICTION_EVICT, 17, 6 * kSec));
  EXPECT_EQ(
      m.Series().evictions.at({kCg, kGpu, GPUQ_TRIGGER_UNKNOWN}).evictions, 1u);
}

TEST(EvictionTest, ExitEndsAPendingEviction) {
  Model m;
  m.Apply(Eviction(kKey, kPid, kCg, kGpu, GPUQ_EVICTION_EVICT,
                   GPUQ_TRIGGER_USERPTR, 1 * kSec));
  m.Apply(Exit(kKey, kPid, kCg));
  EXPECT_TRUE(m.EvictedProcesses().empty());
  m.Apply(Eviction(kKey, kPid, kCg, kGpu, GPUQ_EVICTION_RESTORE,
                   GPUQ_TRIGGER_UNKNOWN, 2 * kSec));
  EXPECT_EQ(
      m.Series().evictions.at({kCg, kGpu, GPUQ_TRIGGER_USERPTR}).duration.count,
      0u);
}

TEST(EvictionTest, NoOwnerIsALoss) {
  Model m;
  m.Apply(Eviction(0, 0, 0, kGpu, GPUQ_EVICTION_EVICT, GPUQ_TRIGGER_TTM, 1));
  EXPECT_TRUE(m.Series().evictions.empty());
  EXPECT_EQ(m.Series().model_drops.no_owner, 1u);
}

TEST(EvictionTest, EraseCgroupRemovesEveryNewSeries) {
  Model m;
  m.Apply(RocrCreate(kKey, kPid, kCg, kGpu, 0, kHandle));
  m.Apply(DoorbellCount(kPid, kCg, kHandle, kGpu, 5));
  m.Apply(Runlist(kKey, kPid, kCg, kGpu, GPUQ_RUNLIST_UNMAP, GPUQ_CAUSE_CREATE,
                  1000));
  m.Apply(Eviction(kKey, kPid, kCg, kGpu, GPUQ_EVICTION_EVICT, GPUQ_TRIGGER_TTM,
                   1));
  m.Apply(Eviction(kKey2, kPid2, kCg2, kGpu, GPUQ_EVICTION_EVICT,
                   GPUQ_TRIGGER_TTM, 1));
  m.EraseCgroup(kCg);
  EXPECT_TRUE(m.Series().doorbells.empty());
  EXPECT_TRUE(m.Series().runlist_causes.empty());
  EXPECT_EQ(m.Series().evictions.size(), 1u);
  EXPECT_EQ(m.EvictedProcesses().size(), 1u);
  // Per-GPU runlist totals are the GPU's, not the container's.
  EXPECT_EQ(m.Series().runlist.size(), 1u);
}

}  // namespace
}  // namespace gpuq::activity_model_test
