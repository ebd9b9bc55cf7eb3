// Model (model/model.h): queue lifecycle counters and gauges, process
// tracking, seeded queues from sysfs meeting their kernel identity later,
// drops, and the sysfs diff. Events are built by hand, one behaviour each.
#include "model/model.h"

#include <gpuq/abi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "event_builders.h"
#include "model_views.h"
#include "sources/event.h"
#include "sources/kfd_sysfs.h"

namespace gpuq::model_test {
namespace {

// Fake struct kfd_process pointers: canonical upper-half addresses.
constexpr uint64_t kKeyA = 0xffff88811d208000ull;
constexpr uint64_t kKeyB = 0xffff88811d20a800ull;
constexpr uint64_t kKeyHost = 0xffff888110e1b800ull;

constexpr uint64_t kCgroupVllm = 5861;
constexpr uint64_t kCgroupHost = 4127;
constexpr uint32_t kGpu1 = 11437;
constexpr uint32_t kGpu2 = 23710;

constexpr uint32_t kCompute = GPUQ_QUEUE_COMPUTE;
constexpr uint32_t kSdma = GPUQ_QUEUE_SDMA;

// The (cgroup, gpu, type) cell summed over owner processes, or all zero.
QueueSeries SeriesOf(const Model& m, uint64_t cgroup, uint32_t gpu,
                     uint32_t type) {
  QueueSeries sum;
  for (const auto& [key, s] : m.Series().queue_series) {
    if (key.cgroup_id != cgroup || key.gpu_id != gpu ||
        key.queue_type != type) {
      continue;
    }
    sum.live += s.live;
    sum.creates += s.creates;
    for (size_t r = 0; r < sum.destroys.size(); ++r) {
      sum.destroys[r] += s.destroys[r];
    }
  }
  return sum;
}

// Whether any series exists for this cgroup.
bool HasSeries(const Model& m, uint64_t cgroup) {
  for (const auto& [key, s] : m.Series().queue_series) {
    if (key.cgroup_id == cgroup) return true;
  }
  return false;
}

SysfsQueue Sysfs(uint32_t pid, uint32_t qid, uint32_t gpu) {
  SysfsQueue q;
  q.pid = pid;
  q.queue_id = qid;
  q.gpu_id = gpu;
  q.type = kCompute;
  q.size = 4096;
  return q;
}

TEST(ModelTest, CreateCountsLiveAndCreatesPerSeries) {
  Model m;
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute));
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 1, kCompute));
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 2, kSdma));
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu2, 3, kCompute));

  EXPECT_EQ(LiveQueues(m).size(), 4u);
  // Each (cgroup, gpu, type) is its own cell.
  EXPECT_EQ(m.Series().queue_series.size(), 3u);
  const QueueSeries c1 = SeriesOf(m, kCgroupVllm, kGpu1, kCompute);
  EXPECT_EQ(c1.live, 2u);
  EXPECT_EQ(c1.creates, 2u);
  const QueueSeries s1 = SeriesOf(m, kCgroupVllm, kGpu1, kSdma);
  EXPECT_EQ(s1.live, 1u);
  EXPECT_EQ(s1.creates, 1u);
  const QueueSeries c2 = SeriesOf(m, kCgroupVllm, kGpu2, kCompute);
  EXPECT_EQ(c2.live, 1u);
  EXPECT_EQ(c2.creates, 1u);
  for (uint64_t d : c1.destroys) EXPECT_EQ(d, 0u);
}

// gpuq_unsampled_queues: which live compute queues the sampler cannot
// count, and why; sampled-capable ROCr queues and other queue types are not
// in it. A queue seeded from sysfs has no addresses (sysfs_only), one
// without ROCr's layout is not_rocr, a ROCr queue whose last read failed is
// unreadable until a read succeeds.
TEST(ModelTest, UnsampledQueuesSayWhySubmissionsAreNotCounted) {
  Model m;
  gpuq_queue_create_event rocr = Create(kKeyA, 100, kCgroupVllm, kGpu1, 0);
  rocr.flags = GPUQ_CREATE_F_ROCR_LAYOUT;
  rocr.write_ptr = 0x7f0000000038;
  rocr.read_ptr = 0x7f0000000080;
  m.Apply(rocr);
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 1));  // no layout: PM4-like
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 2, kSdma));  // never sampled
  gpuq_queue_create_event seeded = Create(0, 100, kCgroupVllm, kGpu1, 3);
  seeded.flags = GPUQ_CREATE_F_SEEDED;
  m.Apply(seeded);
  using Key = std::tuple<uint64_t, uint32_t, UnsampledReason>;
  EXPECT_EQ(m.Series().unsampled_queues,
            (std::map<Key, uint64_t>{
                {{kCgroupVllm, kGpu1, UnsampledReason::kSysfsOnly}, 1},
                {{kCgroupVllm, kGpu1, UnsampledReason::kNotRocr}, 1}}));
  EXPECT_EQ(m.SampleTargets().size(), 1u);

  gpuq_queue_sample_record read{};
  read.hdr = Hdr(GPUQ_EV_QUEUE_SAMPLE, kKeyA, 100, kCgroupVllm);
  read.queue_id = 0;
  read.write_ptr = rocr.write_ptr;
  read.flags = GPUQ_SAMPLE_F_UNREADABLE;
  m.Apply(read);
  EXPECT_EQ(m.Series().unsampled_queues.count(
                {kCgroupVllm, kGpu1, UnsampledReason::kUnreadable}),
            1u);
  EXPECT_EQ(m.SampleTargets().size(), 1u) << "read again at the next round";
  read.flags = 0;
  read.write_index = 5;
  m.Apply(read);
  EXPECT_EQ(m.Series().unsampled_queues.count(
                {kCgroupVllm, kGpu1, UnsampledReason::kUnreadable}),
            0u);
}

TEST(ModelTest, DestroyCountsByReasonUnderCreateLabels) {
  Model m;
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute));
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 1, kCompute));
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 2, kCompute));
  m.Apply(
      Destroy(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute, GPUQ_DESTROY_IOCTL));
  m.Apply(Destroy(kKeyA, 100, kCgroupVllm, kGpu1, 1, kCompute,
                  GPUQ_DESTROY_PROCESS_EXIT));
  // An out-of-range reason from a newer kernel side is counted, as unknown.
  m.Apply(Destroy(kKeyA, 100, kCgroupVllm, kGpu1, 2, kCompute, 99));

  const QueueSeries s = SeriesOf(m, kCgroupVllm, kGpu1, kCompute);
  EXPECT_EQ(s.live, 0u);
  EXPECT_EQ(s.creates, 3u);
  EXPECT_EQ(s.destroys[GPUQ_DESTROY_IOCTL], 1u);
  EXPECT_EQ(s.destroys[GPUQ_DESTROY_PROCESS_EXIT], 1u);
  EXPECT_EQ(s.destroys[GPUQ_DESTROY_UNKNOWN], 1u);
  EXPECT_EQ(LiveQueues(m).size(), 0u);
  EXPECT_EQ(m.Series().model_drops.unknown_queue, 0u);
}

TEST(ModelTest, DestroyIsCountedWhereTheQueueWasCreated) {
  // The destroy header carries other (stale) labels: the counter must land in
  // the queue's own cell, or its gauge and counters would disagree.
  Model m;
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute));
  m.Apply(Destroy(kKeyA, 100, /*cgroup=*/9999, /*gpu=*/kGpu2, 0, kSdma));
  const QueueSeries s = SeriesOf(m, kCgroupVllm, kGpu1, kCompute);
  EXPECT_EQ(s.live, 0u);
  EXPECT_EQ(s.destroys[GPUQ_DESTROY_IOCTL], 1u);
  EXPECT_FALSE(HasSeries(m, 9999));
}

TEST(ModelTest, ProcessesTrackPerGpuQueuesUntilTheLastGoes) {
  Model m;
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute));
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 1, kSdma));
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu2, 2, kCompute));

  ASSERT_EQ(ProcessRows(m).size(), 1u);
  const ProcessRow p = ProcessRows(m).at(0);
  EXPECT_EQ(p.pid, 100u);
  EXPECT_EQ(p.cgroup_id, kCgroupVllm);
  EXPECT_EQ(p.comm, "pt_main_thread");
  EXPECT_FALSE(p.exited);
  EXPECT_EQ(p.queues_per_gpu.at(kGpu1), 2u);
  EXPECT_EQ(p.queues_per_gpu.at(kGpu2), 1u);
  EXPECT_EQ(QueueIdsOf(m, kKeyA), (std::set<uint32_t>{0, 1, 2}));

  // Leaving a GPU drops that GPU from the process.
  m.Apply(Destroy(kKeyA, 100, kCgroupVllm, kGpu2, 2, kCompute));
  ASSERT_EQ(ProcessRows(m).size(), 1u);
  EXPECT_EQ(ProcessRowOf(m, 100).value().queues_per_gpu.count(kGpu2), 0u);
  EXPECT_EQ(ProcessRowOf(m, 100).value().queues_per_gpu.at(kGpu1), 2u);

  m.Apply(Destroy(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute));
  EXPECT_EQ(ProcessRows(m).size(), 1u);
  m.Apply(Destroy(kKeyA, 100, kCgroupVllm, kGpu1, 1, kSdma));
  EXPECT_TRUE(ProcessRows(m).empty()) << "no queues left: not a process";
}

TEST(ModelTest, TwoProcessesInOneCgroupOnOneGpu) {
  // The processes gauge counts processes, not queues or cgroups.
  Model m;
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute));
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 1, kCompute));
  m.Apply(Create(kKeyB, 101, kCgroupVllm, kGpu1, 0, kCompute));
  ASSERT_EQ(ProcessRows(m).size(), 2u);
  EXPECT_EQ(ProcessRowOf(m, 100).value().queues_per_gpu.at(kGpu1), 2u);
  EXPECT_EQ(ProcessRowOf(m, 101).value().queues_per_gpu.at(kGpu1), 1u);
  // Same queue id 0 in two processes: two queues, not a duplicate.
  EXPECT_EQ(LiveQueues(m).size(), 3u);
  EXPECT_EQ(m.Series().model_drops.duplicate_create, 0u);
  EXPECT_EQ(SeriesOf(m, kCgroupVllm, kGpu1, kCompute).live, 3u);
}

TEST(ModelTest, DestroyOfUnknownQueueCountsDrop) {
  Model m;
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute));
  m.Apply(Destroy(kKeyA, 100, kCgroupVllm, kGpu1, 7, kCompute));
  m.Apply(Destroy(kKeyB, 101, kCgroupVllm, kGpu1, 0, kCompute));
  EXPECT_EQ(m.Series().model_drops.unknown_queue, 2u);
  // Nothing else moved: no destroy counted, the real queue still live.
  const QueueSeries s = SeriesOf(m, kCgroupVllm, kGpu1, kCompute);
  EXPECT_EQ(s.live, 1u);
  EXPECT_EQ(s.destroys[GPUQ_DESTROY_IOCTL], 0u);
  EXPECT_EQ(LiveQueues(m).size(), 1u);
}

TEST(ModelTest, DuplicateCreateCountsDropAndKeepsOneLive) {
  // A second create of a live (process, qid) means a destroy was lost.
  Model m;
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute));
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute));
  EXPECT_EQ(m.Series().model_drops.duplicate_create, 1u);
  EXPECT_EQ(LiveQueues(m).size(), 1u);
  EXPECT_EQ(SeriesOf(m, kCgroupVllm, kGpu1, kCompute).live, 1u);
  ASSERT_EQ(ProcessRows(m).size(), 1u);
  EXPECT_EQ(ProcessRowOf(m, 100).value().queues_per_gpu.at(kGpu1), 1u);
}

// One amd_queue_t holds one live ROCr queue: a ROCr create at the address
// of live queues of its process replaces the lowest-numbered of them (its
// destroy was lost), one per create, whatever their layout.
TEST(ModelTest, ARocrCreateReplacesTheLowestLiveQueueAtItsAddress) {
  constexpr uint64_t kAt = 0x7f0000000038, kElsewhere = 0x7f0000100038;
  Model m;
  const auto create = [&](uint32_t qid, uint64_t write_ptr, bool rocr) {
    gpuq_queue_create_event e = Create(kKeyA, 100, kCgroupVllm, kGpu1, qid);
    e.write_ptr = write_ptr;
    if (rocr) e.flags = GPUQ_CREATE_F_ROCR_LAYOUT;
    m.Apply(e);
  };
  create(5, kAt, false);
  create(2, kAt, false);  // no layout: nothing replaced
  create(7, kElsewhere, true);
  create(4, kElsewhere - 8, false);
  EXPECT_EQ(QueueIdsOf(m, kKeyA), (std::set<uint32_t>{2, 4, 5, 7}));
  EXPECT_EQ(m.Series().model_drops.duplicate_create, 0u);
  create(9, kAt, true);
  EXPECT_EQ(QueueIdsOf(m, kKeyA), (std::set<uint32_t>{4, 5, 7, 9}));
  create(11, kAt, true);
  EXPECT_EQ(QueueIdsOf(m, kKeyA), (std::set<uint32_t>{4, 7, 9, 11}));
  create(3, kAt, true);
  EXPECT_EQ(QueueIdsOf(m, kKeyA), (std::set<uint32_t>{3, 4, 7, 11}));
  EXPECT_EQ(m.Series().model_drops.duplicate_create, 3u);
  // Gone, then made again at the address: nothing left there to replace.
  m.Apply(Destroy(kKeyA, 100, kCgroupVllm, kGpu1, 3, kCompute));
  m.Apply(Destroy(kKeyA, 100, kCgroupVllm, kGpu1, 11, kCompute));
  create(12, kAt, true);
  EXPECT_EQ(QueueIdsOf(m, kKeyA), (std::set<uint32_t>{4, 7, 12}));
  EXPECT_EQ(m.Series().model_drops.duplicate_create, 3u);
  EXPECT_EQ(SeriesOf(m, kCgroupVllm, kGpu1, kCompute).live, 3u);
}

TEST(ModelTest, DuplicateCreateOnOtherGpuMovesTheGauge) {
  // The stale entry's gauge must go down where it was counted.
  Model m;
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute));
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu2, 0, kSdma));
  EXPECT_EQ(m.Series().model_drops.duplicate_create, 1u);
  EXPECT_EQ(SeriesOf(m, kCgroupVllm, kGpu1, kCompute).live, 0u);
  EXPECT_EQ(SeriesOf(m, kCgroupVllm, kGpu2, kSdma).live, 1u);
  EXPECT_EQ(LiveQueues(m).size(), 1u);
}

TEST(ModelTest, SeededQueueIsLiveButNotACreate) {
  Model m;
  m.Apply(Seeded(2817, kCgroupHost, kGpu2, 0, kCompute));
  const QueueSeries s = SeriesOf(m, kCgroupHost, kGpu2, kCompute);
  EXPECT_EQ(s.live, 1u);
  EXPECT_EQ(s.creates, 0u) << "seeded queues are excluded from creates";
  EXPECT_EQ(LiveQueues(m).size(), 1u);
  ASSERT_EQ(ProcessRows(m).size(), 1u);
  const ProcessRow p = ProcessRows(m).at(0);
  EXPECT_EQ(p.pid, 2817u);
  EXPECT_EQ(p.comm, "hipcc_bench");
  EXPECT_EQ(p.queues_per_gpu.at(kGpu2), 1u);
}

TEST(ModelTest, DestroyOfSeededQueueMatchesByTgid) {
  // The queue existed before the agent: the kernel side did not have it in
  // its map (UNTRACKED) but knows the real process key. The model must match
  // it to the seeded queue by tgid + queue id, and count a destroy.
  Model m;
  m.Apply(Seeded(2817, kCgroupHost, kGpu2, 0, kCompute));
  m.Apply(Destroy(kKeyHost, 2817, kCgroupHost, kGpu2, 0, kCompute,
                  GPUQ_DESTROY_IOCTL, GPUQ_DESTROY_F_UNTRACKED));
  const QueueSeries s = SeriesOf(m, kCgroupHost, kGpu2, kCompute);
  EXPECT_EQ(s.live, 0u);
  EXPECT_EQ(s.destroys[GPUQ_DESTROY_IOCTL], 1u);
  EXPECT_EQ(m.Series().model_drops.unknown_queue, 0u);
  EXPECT_EQ(LiveQueues(m).size(), 0u);
  EXPECT_TRUE(ProcessRows(m).empty());
}

TEST(ModelTest, DestroyOfSeededQueueRekeysItsProcess) {
  // The destroy names the real key: the process's other seeded queues move
  // under it, so later events by that key (exit, destroys) find them.
  Model m;
  m.Apply(Seeded(2817, kCgroupHost, kGpu2, 0, kCompute));
  m.Apply(Seeded(2817, kCgroupHost, kGpu2, 1, kCompute));
  m.Apply(Destroy(kKeyHost, 2817, kCgroupHost, kGpu2, 0, kCompute,
                  GPUQ_DESTROY_IOCTL, GPUQ_DESTROY_F_UNTRACKED));
  ASSERT_EQ(ProcessRows(m).size(), 1u);
  EXPECT_EQ(QueueIdsOf(m, kKeyHost), (std::set<uint32_t>{1}));
  EXPECT_EQ(SeriesOf(m, kCgroupHost, kGpu2, kCompute).live, 1u);
}

TEST(ModelTest, DestroyWithoutKernelKeyMatchesSeededByTgid) {
  // A destroy whose owner key is not a kernel pointer still reaches the
  // seeded queue through its tgid.
  Model m;
  m.Apply(Seeded(2817, kCgroupHost, kGpu2, 0, kCompute));
  m.Apply(Destroy(0, 2817, kCgroupHost, kGpu2, 0, kCompute, GPUQ_DESTROY_IOCTL,
                  GPUQ_DESTROY_F_UNTRACKED));
  EXPECT_EQ(m.Series().model_drops.unknown_queue, 0u);
  EXPECT_EQ(LiveQueues(m).size(), 0u);
  EXPECT_EQ(
      SeriesOf(m, kCgroupHost, kGpu2, kCompute).destroys[GPUQ_DESTROY_IOCTL],
      1u);
}

TEST(ModelTest, DestroyOfSeededQueueDoesNotMatchOtherTgid) {
  Model m;
  m.Apply(Seeded(2817, kCgroupHost, kGpu2, 0, kCompute));
  m.Apply(Destroy(kKeyHost, 2818, kCgroupHost, kGpu2, 0, kCompute,
                  GPUQ_DESTROY_IOCTL, GPUQ_DESTROY_F_UNTRACKED));
  EXPECT_EQ(m.Series().model_drops.unknown_queue, 1u);
  EXPECT_EQ(LiveQueues(m).size(), 1u);
}

TEST(ModelTest, LaterCreateAdoptsSeededProcess) {
  // The bundled capture's host process: one seeded queue, then a real create
  // with the kernel key. It is one process, not two.
  Model m;
  m.Apply(Seeded(2817, kCgroupHost, kGpu2, 0, kCompute));
  m.Apply(Create(kKeyHost, 2817, kCgroupHost, kGpu2, 1, kCompute));
  ASSERT_EQ(ProcessRows(m).size(), 1u);
  const ProcessRow p = ProcessRows(m).at(0);
  EXPECT_EQ(p.pid, 2817u);
  EXPECT_EQ(p.queues_per_gpu.at(kGpu2), 2u);
  // Both queues under the kernel key: the seeded one was adopted.
  EXPECT_EQ(QueueIdsOf(m, kKeyHost), (std::set<uint32_t>{0, 1}));
  const QueueSeries s = SeriesOf(m, kCgroupHost, kGpu2, kCompute);
  EXPECT_EQ(s.live, 2u);
  EXPECT_EQ(s.creates, 1u);

  // Then the seeded queue goes, by its real key: README's end state for the
  // host row (live 1, creates 1, destroys ioctl 1).
  m.Apply(Destroy(kKeyHost, 2817, kCgroupHost, kGpu2, 0, kCompute,
                  GPUQ_DESTROY_IOCTL, GPUQ_DESTROY_F_UNTRACKED));
  const QueueSeries after = SeriesOf(m, kCgroupHost, kGpu2, kCompute);
  EXPECT_EQ(after.live, 1u);
  EXPECT_EQ(after.creates, 1u);
  EXPECT_EQ(after.destroys[GPUQ_DESTROY_IOCTL], 1u);
  EXPECT_EQ(m.Series().model_drops.unknown_queue, 0u);
  ASSERT_EQ(ProcessRows(m).size(), 1u);
  EXPECT_EQ(QueueIdsOf(m, kKeyHost), (std::set<uint32_t>{1}));
}

TEST(ModelTest, SeededQueueJoinsProcessKnownByKernelKey) {
  // Reconciliation seeds a queue of a process the model already knows by its
  // kernel key (say a create was lost): it must join that process.
  Model m;
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute));
  m.Apply(Seeded(100, kCgroupVllm, kGpu1, 1, kSdma));
  ASSERT_EQ(ProcessRows(m).size(), 1u);
  EXPECT_EQ(ProcessRowOf(m, 100).value().queues_per_gpu.at(kGpu1), 2u);
  EXPECT_EQ(QueueIdsOf(m, kKeyA), (std::set<uint32_t>{0, 1}));
  EXPECT_EQ(SeriesOf(m, kCgroupVllm, kGpu1, kSdma).live, 1u);
  EXPECT_EQ(SeriesOf(m, kCgroupVllm, kGpu1, kSdma).creates, 0u);

  // Its destroy, by kernel key, finds it.
  m.Apply(Destroy(kKeyA, 100, kCgroupVllm, kGpu1, 1, kSdma));
  EXPECT_EQ(m.Series().model_drops.unknown_queue, 0u);
  EXPECT_EQ(SeriesOf(m, kCgroupVllm, kGpu1, kSdma).live, 0u);
}

TEST(ModelTest, ProcessExitMarksExitedAndCountsPerCgroup) {
  Model m;
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute));
  m.Apply(Create(kKeyB, 101, kCgroupVllm, kGpu1, 0, kCompute));
  m.Apply(Exit(kKeyA, 100, kCgroupVllm));

  EXPECT_EQ(m.Series().process_exits.at(kCgroupVllm), 1u);
  EXPECT_EQ(m.Series().process_exits.count(kCgroupHost), 0u);
  // The exit marker comes before the kworker frees the queues: the process
  // stays, marked, with its queues live.
  ASSERT_TRUE(ProcessRowOf(m, 100).has_value());
  EXPECT_TRUE(ProcessRowOf(m, 100).value().exited);
  EXPECT_FALSE(ProcessRowOf(m, 101).value().exited);
  EXPECT_EQ(LiveQueues(m).size(), 2u);

  // An exit of a process without queues still counts (KFD process went).
  m.Apply(Exit(0xffff888100000000ull, 555, kCgroupHost));
  EXPECT_EQ(m.Series().process_exits.at(kCgroupHost), 1u);
  EXPECT_EQ(m.Series().process_exits.at(kCgroupVllm), 1u);
}

TEST(ModelTest, ExitThenProcessExitDestroysTearDown) {
  // README trainer: exit, then the kworker destroys every queue.
  Model m;
  m.Apply(Create(kKeyA, 48211, 6342, kGpu1, 0, kCompute));
  m.Apply(Create(kKeyA, 48211, 6342, kGpu1, 1, kCompute));
  m.Apply(Create(kKeyA, 48211, 6342, kGpu1, 2, kSdma));
  m.Apply(Exit(kKeyA, 48211, 6342));
  m.Apply(Destroy(kKeyA, 48211, 6342, kGpu1, 0, kCompute,
                  GPUQ_DESTROY_PROCESS_EXIT));
  m.Apply(Destroy(kKeyA, 48211, 6342, kGpu1, 1, kCompute,
                  GPUQ_DESTROY_PROCESS_EXIT));
  EXPECT_EQ(ProcessRows(m).size(), 1u) << "one queue left";
  m.Apply(
      Destroy(kKeyA, 48211, 6342, kGpu1, 2, kSdma, GPUQ_DESTROY_PROCESS_EXIT));

  EXPECT_TRUE(ProcessRows(m).empty());
  EXPECT_EQ(LiveQueues(m).size(), 0u);
  const QueueSeries c = SeriesOf(m, 6342, kGpu1, kCompute);
  EXPECT_EQ(c.live, 0u);
  EXPECT_EQ(c.creates, 2u);
  EXPECT_EQ(c.destroys[GPUQ_DESTROY_PROCESS_EXIT], 2u);
  EXPECT_EQ(c.destroys[GPUQ_DESTROY_IOCTL], 0u);
  const QueueSeries s = SeriesOf(m, 6342, kGpu1, kSdma);
  EXPECT_EQ(s.destroys[GPUQ_DESTROY_PROCESS_EXIT], 1u);
  EXPECT_EQ(m.Series().process_exits.at(6342), 1u);
}

TEST(ModelTest, ExitByKernelKeyReachesSeededProcess) {
  Model m;
  m.Apply(Seeded(2817, kCgroupHost, kGpu2, 0, kCompute));
  m.Apply(Exit(kKeyHost, 2817, kCgroupHost));
  ASSERT_EQ(ProcessRows(m).size(), 1u);
  EXPECT_TRUE(ProcessRows(m).at(0).exited);
  // And the teardown destroy finds the queue.
  m.Apply(Destroy(kKeyHost, 2817, kCgroupHost, kGpu2, 0, kCompute,
                  GPUQ_DESTROY_PROCESS_EXIT, GPUQ_DESTROY_F_UNTRACKED));
  EXPECT_EQ(m.Series().model_drops.unknown_queue, 0u);
  EXPECT_EQ(SeriesOf(m, kCgroupHost, kGpu2, kCompute)
                .destroys[GPUQ_DESTROY_PROCESS_EXIT],
            1u);
}

TEST(ModelTest, CreateFailuresKeyedByCgroupGpuAndErrno) {
  Model m;
  m.Apply(CreateFailed(kKeyA, 2817, kCgroupHost, kGpu2, -12));
  m.Apply(CreateFailed(kKeyA, 2817, kCgroupHost, kGpu2, -12));
  m.Apply(CreateFailed(kKeyA, 2817, kCgroupHost, kGpu2, -22));
  m.Apply(CreateFailed(kKeyA, 2817, kCgroupHost, kGpu1, -12));
  m.Apply(CreateFailed(kKeyA, 100, kCgroupVllm, kGpu2, -12));

  const auto f = m.Series().create_failures;
  EXPECT_EQ(f.size(), 4u);
  EXPECT_EQ(f.at({kCgroupHost, kGpu2, -12}), 2u);
  EXPECT_EQ(f.at({kCgroupHost, kGpu2, -22}), 1u);
  EXPECT_EQ(f.at({kCgroupHost, kGpu1, -12}), 1u);
  EXPECT_EQ(f.at({kCgroupVllm, kGpu2, -12}), 1u);
  // A failure is not a queue.
  EXPECT_EQ(LiveQueues(m).size(), 0u);
  EXPECT_TRUE(m.Series().queue_series.empty());
}

TEST(ModelTest, GpuInfoFillsGpuTable) {
  Model m;
  m.Apply(GpuInfo(kGpu1, 1));
  m.Apply(GpuInfo(kGpu2, 2));
  ASSERT_EQ(m.Series().gpus.size(), 2u);
  const GpuNode n = m.Series().gpus.at(kGpu1);
  EXPECT_EQ(n.gpu_id, kGpu1);
  EXPECT_EQ(n.node, 1u);
  EXPECT_EQ(n.name, "gfx942");
  EXPECT_EQ(n.vendor_id, 0x1002u);
  EXPECT_EQ(n.device_id, 0x74a1u);
  EXPECT_EQ(n.gfx_target_version, 90402u);
  EXPECT_EQ(n.unique_id, 0xcf39ab978c9c839aull);
  EXPECT_EQ(n.drm_render_minor, 128u);
  EXPECT_EQ(n.PciAddress(), "0000:05:00.0");
  EXPECT_EQ(m.Series().gpus.at(kGpu2).node, 2u);
  // A second record for the same gpu replaces the first.
  m.Apply(GpuInfo(kGpu1, 9));
  EXPECT_EQ(m.Series().gpus.size(), 2u);
  EXPECT_EQ(m.Series().gpus.at(kGpu1).node, 9u);
}

TEST(ModelTest, EventsByTypeCountsEveryType) {
  Model m;
  m.Apply(GpuInfo(kGpu1, 1));
  m.Apply(PathRecord(kCgroupHost, "/user.slice"));
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute));
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 1, kCompute));
  m.Apply(CreateFailed(kKeyA, 100, kCgroupVllm, kGpu1, -12));
  m.Apply(Destroy(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute));
  // Unknown-queue destroys are still events processed.
  m.Apply(Destroy(kKeyA, 100, kCgroupVllm, kGpu1, 42, kCompute));
  m.Apply(Exit(kKeyA, 100, kCgroupVllm));

  const auto n = m.Series().events_by_type;
  EXPECT_EQ(n[GPUQ_EV_INVALID], 0u);
  EXPECT_EQ(n[GPUQ_EV_QUEUE_CREATE], 2u);
  EXPECT_EQ(n[GPUQ_EV_QUEUE_DESTROY], 2u);
  EXPECT_EQ(n[GPUQ_EV_PROCESS_EXIT], 1u);
  EXPECT_EQ(n[GPUQ_EV_QUEUE_CREATE_FAILED], 1u);
  EXPECT_EQ(n[GPUQ_EV_GPU_INFO], 1u);
  EXPECT_EQ(n[GPUQ_EV_CGROUP_PATH], 1u);
  // A cgroup path is only counted: no queue, no process.
  EXPECT_EQ(LiveQueues(m).size(), 1u);
}

TEST(ModelTest, DiffFindsMissingBothWaysAndSignedDrift) {
  Model m;
  m.Apply(Create(kKeyA, 10, kCgroupVllm, 1, 0, kCompute));
  m.Apply(Create(kKeyA, 10, kCgroupVllm, 1, 1, kCompute));
  m.Apply(Create(kKeyB, 20, kCgroupVllm, 2, 0, kCompute));
  // sysfs: shares (10, 0); lacks (10, 1) and (20, 0); has (30, 5), (30, 6).
  const std::vector<SysfsQueue> sysfs = {Sysfs(10, 0, 1), Sysfs(30, 5, 2),
                                         Sysfs(30, 6, 3)};
  const ReconcileDiff d = m.Diff(sysfs);

  ASSERT_EQ(d.missing_in_model.size(), 2u);
  std::vector<std::pair<uint32_t, uint32_t>> in_sysfs_only;
  for (const SysfsQueue& q : d.missing_in_model) {
    in_sysfs_only.emplace_back(q.pid, q.queue_id);
  }
  std::sort(in_sysfs_only.begin(), in_sysfs_only.end());
  EXPECT_EQ(in_sysfs_only,
            (std::vector<std::pair<uint32_t, uint32_t>>{{30, 5}, {30, 6}}));

  ASSERT_EQ(d.missing_in_sysfs.size(), 2u);
  std::vector<std::pair<uint32_t, uint32_t>> in_model_only;
  for (const QueueState& q : d.missing_in_sysfs) {
    in_model_only.emplace_back(q.tgid, q.queue_id);
  }
  std::sort(in_model_only.begin(), in_model_only.end());
  EXPECT_EQ(in_model_only,
            (std::vector<std::pair<uint32_t, uint32_t>>{{10, 1}, {20, 0}}));

  // Model minus sysfs: gpu 1 has 2 vs 1, gpu 2 has 1 vs 1, gpu 3 has 0 vs 1.
  auto drift = [&](uint32_t gpu) -> int64_t {
    auto it = d.drift_per_gpu.find(gpu);
    return it == d.drift_per_gpu.end() ? 0 : it->second;
  };
  EXPECT_EQ(drift(1), 1);
  EXPECT_EQ(drift(2), 0);
  EXPECT_EQ(drift(3), -1);
}

TEST(ModelTest, DiffMatchesSeededQueuesByTgid) {
  Model m;
  m.Apply(Seeded(2817, kCgroupHost, kGpu2, 0, kCompute));
  m.Apply(Create(kKeyHost, 2817, kCgroupHost, kGpu2, 1, kCompute));
  const ReconcileDiff d =
      m.Diff({Sysfs(2817, 0, kGpu2), Sysfs(2817, 1, kGpu2)});
  EXPECT_TRUE(d.missing_in_model.empty());
  EXPECT_TRUE(d.missing_in_sysfs.empty());
  for (const auto& [gpu, n] : d.drift_per_gpu) EXPECT_EQ(n, 0) << gpu;
}

TEST(ModelTest, DiffCountsQueueIdsOfSecondaryContexts) {
  // 7.2+: pid 10 has its primary context (kKeyA) and a secondary one
  // (kKeyB), each with a queue 0; sysfs lists both, the second under
  // proc/10/context_1/queues/0.
  Model m;
  m.Apply(Create(kKeyA, 10, kCgroupVllm, 1, 0, kCompute));
  m.Apply(Create(kKeyB, 10, kCgroupVllm, 1, 0, kCompute));
  SysfsQueue context_queue = Sysfs(10, 0, 1);
  context_queue.context = 1;
  ReconcileDiff d = m.Diff({Sysfs(10, 0, 1), context_queue});
  EXPECT_TRUE(d.missing_in_model.empty());
  EXPECT_TRUE(d.missing_in_sysfs.empty());
  // One of the two gone from sysfs: one model queue is missing there.
  d = m.Diff({Sysfs(10, 0, 1)});
  EXPECT_EQ(d.missing_in_sysfs.size(), 1u);
  // A context's queue the model lacks is never reported for seeding; a
  // primary's is.
  Model empty;
  d = empty.Diff({Sysfs(10, 0, 1), context_queue});
  ASSERT_EQ(d.missing_in_model.size(), 1u);
  EXPECT_EQ(d.missing_in_model[0].context, kPrimaryContext);
}

TEST(ModelTest, DiffOfAgreeingEmptyStatesIsEmpty) {
  Model m;
  const ReconcileDiff d = m.Diff({});
  EXPECT_TRUE(d.missing_in_model.empty());
  EXPECT_TRUE(d.missing_in_sysfs.empty());
  EXPECT_TRUE(d.drift_per_gpu.empty());
}

TEST(ModelTest, RecoveredDestroyRemovesAndCountsAnUnknownDestroy) {
  Model m;
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute));
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 1, kCompute));
  m.Apply(Recovered(kKeyA, 100, 0));

  EXPECT_EQ(LiveQueues(m).size(), 1u);
  const QueueSeries s = SeriesOf(m, kCgroupVllm, kGpu1, kCompute);
  EXPECT_EQ(s.live, 1u);
  EXPECT_EQ(s.creates, 2u);
  // Counted under the queue's own labels (the record's are not read), as
  // reason unknown.
  EXPECT_EQ(s.destroys[GPUQ_DESTROY_UNKNOWN], 1u);
  EXPECT_EQ(s.destroys[GPUQ_DESTROY_IOCTL], 0u);
  EXPECT_EQ(s.destroys[GPUQ_DESTROY_PROCESS_EXIT], 0u);
  EXPECT_EQ(m.Series().model_drops.unknown_queue, 0u);
  EXPECT_EQ(QueueIdsOf(m, kKeyA), (std::set<uint32_t>{1}));

  m.Apply(Recovered(kKeyA, 100, 1));
  EXPECT_TRUE(ProcessRows(m).empty());
  // A second one of the same queue finds nothing and counts nothing.
  m.Apply(Recovered(kKeyA, 100, 1));
  EXPECT_EQ(LiveQueues(m).size(), 0u);
  EXPECT_EQ(
      SeriesOf(m, kCgroupVllm, kGpu1, kCompute).destroys[GPUQ_DESTROY_UNKNOWN],
      2u);
  EXPECT_EQ(m.Series().model_drops.unknown_queue, 0u);
}

TEST(ModelTest, RecoveredCreateIsCountedASeededOneIsNot) {
  Model m;
  m.Apply(Seeded(2817, kCgroupHost, kGpu2, 0, kCompute));
  gpuq_queue_create_event lost = Seeded(2817, kCgroupHost, kGpu2, 1, kCompute);
  lost.flags |= GPUQ_CREATE_F_RECOVERED;
  m.Apply(lost);
  const QueueSeries s = SeriesOf(m, kCgroupHost, kGpu2, kCompute);
  EXPECT_EQ(s.live, 2u);
  EXPECT_EQ(s.creates, 1u);
}

}  // namespace
// A recording begun later (Model::StateAsRecords) starts with a recovered
// queue as live, not as a create of the recording.
TEST(ModelTest, StartStateOfARecoveredQueueIsNoCreate) {
  Model m;
  gpuq_queue_create_event lost = Seeded(2817, kCgroupHost, kGpu2, 1, kCompute);
  lost.flags |= GPUQ_CREATE_F_RECOVERED;
  m.Apply(lost);
  Model replay;
  size_t creates = 0;
  for (const Event& e : m.StateAsRecords(100)) {
    if (const auto* c = std::get_if<gpuq_queue_create_event>(&e)) {
      ++creates;
      EXPECT_NE(c->flags & GPUQ_CREATE_F_SEEDED, 0u);
      EXPECT_EQ(c->flags & GPUQ_CREATE_F_RECOVERED, 0u);
    }
    replay.Apply(e);
  }
  EXPECT_EQ(creates, 1u);
  const QueueSeries s = SeriesOf(replay, kCgroupHost, kGpu2, kCompute);
  EXPECT_EQ(s.live, 1u);
  EXPECT_EQ(s.creates, 0u);
}

TEST(ModelTest, LateDestroyOfARecoveredQueueCountsNoSecondDestroy) {
  Model m;
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute));
  // reconciliation: gone from sysfs, destroy in flight
  m.Apply(Recovered(kKeyA, 100, 0));
  m.Apply(Destroy(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute,
                  GPUQ_DESTROY_PROCESS_EXIT));
  QueueSeries s = SeriesOf(m, kCgroupVllm, kGpu1, kCompute);
  EXPECT_EQ(s.live, 0u);
  EXPECT_EQ(s.destroys[GPUQ_DESTROY_UNKNOWN], 1u);
  EXPECT_EQ(s.destroys[GPUQ_DESTROY_PROCESS_EXIT], 0u);
  EXPECT_EQ(s.destroys[GPUQ_DESTROY_IOCTL], 0u);
  EXPECT_EQ(m.Series().model_drops.unknown_queue, 0u);
  // The tombstone is used once: a repeated destroy is a real unknown.
  m.Apply(Destroy(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute));
  s = SeriesOf(m, kCgroupVllm, kGpu1, kCompute);
  EXPECT_EQ(s.destroys[GPUQ_DESTROY_IOCTL], 0u);
  EXPECT_EQ(m.Series().model_drops.unknown_queue, 1u);
}

TEST(ModelTest, LateDestroyOfARecoveredSeededQueueTakesItsTombstone) {
  Model m;
  m.Apply(Seeded(2817, kCgroupHost, kGpu2, 0, kCompute));
  m.Apply(Recovered(SeededProcessKey(2817), 2817, 0));
  // The destroy names the kernel key the seeded queue never had.
  m.Apply(Destroy(kKeyHost, 2817, kCgroupHost, kGpu2, 0, kCompute));
  const QueueSeries s = SeriesOf(m, kCgroupHost, kGpu2, kCompute);
  EXPECT_EQ(s.destroys[GPUQ_DESTROY_UNKNOWN], 1u);
  EXPECT_EQ(s.destroys[GPUQ_DESTROY_IOCTL], 0u);
  EXPECT_EQ(s.live, 0u);
  EXPECT_EQ(m.Series().model_drops.unknown_queue, 0u);
}

TEST(ModelTest, CreateOfTheSameKeyRetiresTheTombstone) {
  Model m;
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute));
  m.Apply(Recovered(kKeyA, 100, 0));
  // amdkfd reuses the id only after uninit_queue(): the old destroy was lost.
  m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute));
  m.Apply(Destroy(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute));
  m.Apply(Destroy(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute));
  const QueueSeries s = SeriesOf(m, kCgroupVllm, kGpu1, kCompute);
  EXPECT_EQ(s.destroys[GPUQ_DESTROY_UNKNOWN], 1u);
  EXPECT_EQ(s.destroys[GPUQ_DESTROY_IOCTL], 1u);
  EXPECT_EQ(s.live, 0u);
  EXPECT_EQ(m.Series().model_drops.unknown_queue, 1u);
}

TEST(ModelTest, TombstonesAreBounded) {
  Model m;
  const uint32_t n = static_cast<uint32_t>(Model::kMaxTombstones) + 10;
  for (uint32_t q = 0; q < n; ++q) {
    m.Apply(Create(kKeyA, 100, kCgroupVllm, kGpu1, q, kCompute));
    m.Apply(Recovered(kKeyA, 100, q));
  }
  // kMaxTombstones are kept, the oldest went first: the late destroys of
  // the 10 oldest are unknown queues, those of the 11th oldest and the
  // newest take their tombstones; none counts a second destroy.
  m.Apply(Destroy(kKeyA, 100, kCgroupVllm, kGpu1, 0, kCompute));
  m.Apply(Destroy(kKeyA, 100, kCgroupVllm, kGpu1, 9, kCompute));
  EXPECT_EQ(m.Series().model_drops.unknown_queue, 2u);
  m.Apply(Destroy(kKeyA, 100, kCgroupVllm, kGpu1, 10, kCompute));
  m.Apply(Destroy(kKeyA, 100, kCgroupVllm, kGpu1, n - 1, kCompute));
  EXPECT_EQ(m.Series().model_drops.unknown_queue, 2u);
  const QueueSeries s = SeriesOf(m, kCgroupVllm, kGpu1, kCompute);
  EXPECT_EQ(s.destroys[GPUQ_DESTROY_IOCTL], 0u);
  EXPECT_EQ(s.destroys[GPUQ_DESTROY_UNKNOWN], n);
}

}  // namespace gpuq::model_test
