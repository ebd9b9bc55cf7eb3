// Preemption as the victims see it (model/preemption.h), the queues'
// priority classes (model/queue_priority.h) and CU masks
// (model/queue_cu_mask.h): which containers'
// queues each runlist operation took off the GPU, by cause and by whose
// operation, and for how long. The records arrive in the order the kernel
// writes them: an operation's unmap and map before its own create, destroy
// or eviction record (each written at its function's return).
#include <gpuq/abi.h>
#include <gtest/gtest.h>

#include <cstdint>

#include "activity_builders.h"
#include "event_builders.h"
#include "model/model.h"

namespace gpuq::preemption_model_test {
namespace {

constexpr uint32_t kPreemptedGpu = 11437;
constexpr uint64_t kCgA = 5861;  // the latency container
constexpr uint64_t kCgB = 6020;  // the batch container
constexpr uint64_t kKeyA = 0xffff88811d208000ull;
constexpr uint64_t kKeyB = 0xffff888110e1b800ull;
constexpr uint32_t kPidA = 31200;
constexpr uint32_t kPidB = 31333;
constexpr uint64_t kUs = 1000;

// A queue as KFD creates it for ROCr: a ring and a full percentage, so
// amdkfd counts it active and maps it.
gpuq_queue_create_event Active(uint64_t key, uint32_t pid, uint64_t cg,
                               uint32_t qid) {
  gpuq_queue_create_event e = Create(key, pid, cg, kPreemptedGpu, qid);
  e.ring_address = 0x7e0000000000ull + qid * 0x100000ull;
  e.percentage = 100;
  return e;
}

// An unmap that ran from `start_us` for `us`, caused by (key, pid, cg).
gpuq_runlist_event Unmap(uint64_t key, uint32_t pid, uint64_t cg,
                         uint32_t cause, uint64_t start_us, uint64_t us,
                         int32_t ret = 0) {
  gpuq_runlist_event e = Runlist(key, pid, cg, kPreemptedGpu,
                                 GPUQ_RUNLIST_UNMAP, cause, us * kUs, ret);
  e.hdr.ts_ns = (start_us + us) * kUs;
  return e;
}

gpuq_runlist_event Map(uint64_t key, uint32_t pid, uint64_t cg, uint32_t cause,
                       uint64_t end_us, int32_t ret = 0) {
  gpuq_runlist_event e = Runlist(key, pid, cg, kPreemptedGpu, GPUQ_RUNLIST_MAP,
                                 cause, 10 * kUs, ret);
  e.hdr.ts_ns = end_us * kUs;
  return e;
}

PreemptionSeries Of(const Model& m, uint64_t cg, uint32_t cause, bool self,
                    Scheduler sched = Scheduler::kHws) {
  const auto all = m.Series().preemptions;
  auto it = all.find({cg, kPreemptedGpu, sched, cause, self});
  return it == all.end() ? PreemptionSeries{} : it->second;
}

// Two containers share a GPU, one queue each, mapped by B's create.
Model Shared() {
  Model m;
  m.Apply(Active(kKeyA, kPidA, kCgA, 0));
  m.Apply(Unmap(kKeyB, kPidB, kCgB, GPUQ_CAUSE_CREATE, 100, 10));
  m.Apply(Map(kKeyB, kPidB, kCgB, GPUQ_CAUSE_CREATE, 150));
  m.Apply(Active(kKeyB, kPidB, kCgB, 0));
  return m;
}

TEST(PreemptionModelTest, AnUnmapPreemptsEveryContainerWithMappedQueues) {
  Model m = Shared();
  // B's create took A's queue off; B's own new queue was not mapped yet.
  EXPECT_EQ(Of(m, kCgA, GPUQ_CAUSE_CREATE, false).preemptions, 1u);
  EXPECT_EQ(Of(m, kCgA, GPUQ_CAUSE_CREATE, false).off_ns, 50 * kUs)
      << "from the unmap's entry (100 us) to the map's return (150 us)";
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_CREATE, true).preemptions, 0u);

  // A updates its queue: both are taken off, A by itself, B by another.
  m.Apply(Unmap(kKeyA, kPidA, kCgA, GPUQ_CAUSE_UPDATE, 1000, 40));
  // Counted at the unmap, their time off at the map's return.
  EXPECT_EQ(Of(m, kCgA, GPUQ_CAUSE_UPDATE, true).preemptions, 1u);
  EXPECT_EQ(Of(m, kCgA, GPUQ_CAUSE_UPDATE, true).off_ns, 0u);
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_UPDATE, false).off_ns, 0u);
  m.Apply(Map(kKeyA, kPidA, kCgA, GPUQ_CAUSE_UPDATE, 1100));
  EXPECT_EQ(Of(m, kCgA, GPUQ_CAUSE_UPDATE, true).preemptions, 1u);
  EXPECT_EQ(Of(m, kCgA, GPUQ_CAUSE_UPDATE, true).off_ns, 100 * kUs);
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_UPDATE, false).preemptions, 1u);
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_UPDATE, false).off_ns, 100 * kUs);
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_UPDATE, true).preemptions, 0u);
}

TEST(PreemptionModelTest, TheOperationsOwnQueuesAreNotItsVictims) {
  Model m = Shared();
  m.Apply(Active(kKeyB, kPidB, kCgB, 1));  // B: two queues now
  // B destroys one: B keeps one mapped queue, so both are victims.
  m.Apply(Unmap(kKeyB, kPidB, kCgB, GPUQ_CAUSE_DESTROY, 1000, 10));
  m.Apply(Map(kKeyB, kPidB, kCgB, GPUQ_CAUSE_DESTROY, 1020));
  m.Apply(Destroy(kKeyB, kPidB, kCgB, kPreemptedGpu, 1, GPUQ_QUEUE_COMPUTE));
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_DESTROY, true).preemptions, 1u);
  EXPECT_EQ(Of(m, kCgA, GPUQ_CAUSE_DESTROY, false).preemptions, 1u);
  // Its last: only A's queue was taken off and stays.
  m.Apply(Unmap(kKeyB, kPidB, kCgB, GPUQ_CAUSE_DESTROY, 2000, 10));
  m.Apply(Map(kKeyB, kPidB, kCgB, GPUQ_CAUSE_DESTROY, 2020));
  m.Apply(Destroy(kKeyB, kPidB, kCgB, kPreemptedGpu, 0, GPUQ_QUEUE_COMPUTE));
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_DESTROY, true).preemptions, 1u);
  EXPECT_EQ(Of(m, kCgA, GPUQ_CAUSE_DESTROY, false).preemptions, 2u);
}

TEST(PreemptionModelTest, EvictedQueuesAreNotCountedTwice) {
  Model m = Shared();
  // B is evicted: its queues leave as an eviction, A's as a preemption.
  m.Apply(Unmap(kKeyB, kPidB, kCgB, GPUQ_CAUSE_EVICT, 1000, 10));
  m.Apply(Map(kKeyB, kPidB, kCgB, GPUQ_CAUSE_EVICT, 1020));
  m.Apply(Eviction(kKeyB, kPidB, kCgB, kPreemptedGpu, GPUQ_EVICTION_EVICT,
                   GPUQ_TRIGGER_TTM, 1030 * kUs));
  EXPECT_EQ(Of(m, kCgA, GPUQ_CAUSE_EVICT, false).preemptions, 1u);
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_EVICT, true).preemptions, 0u);
  // While B is evicted, A's update takes only A off.
  m.Apply(Unmap(kKeyA, kPidA, kCgA, GPUQ_CAUSE_UPDATE, 2000, 10));
  m.Apply(Map(kKeyA, kPidA, kCgA, GPUQ_CAUSE_UPDATE, 2020));
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_UPDATE, false).preemptions, 0u);
  // B's restore: B's queues were not on the GPU to be taken off.
  m.Apply(Unmap(kKeyB, kPidB, kCgB, GPUQ_CAUSE_RESTORE, 3000, 10));
  m.Apply(Map(kKeyB, kPidB, kCgB, GPUQ_CAUSE_RESTORE, 3020));
  m.Apply(Eviction(kKeyB, kPidB, kCgB, kPreemptedGpu, GPUQ_EVICTION_RESTORE,
                   GPUQ_TRIGGER_UNKNOWN, 3030 * kUs));
  EXPECT_EQ(Of(m, kCgA, GPUQ_CAUSE_RESTORE, false).preemptions, 1u);
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_RESTORE, true).preemptions, 0u);
  // Back on the GPU, B is a victim again.
  m.Apply(Unmap(kKeyA, kPidA, kCgA, GPUQ_CAUSE_UPDATE, 4000, 10));
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_UPDATE, false).preemptions, 1u);
}

TEST(PreemptionModelTest, ATerminatingProcessIsNotItsOwnVictim) {
  Model m = Shared();
  m.Apply(Unmap(kKeyB, kPidB, kCgB, GPUQ_CAUSE_TERMINATE, 1000, 10));
  m.Apply(Map(kKeyB, kPidB, kCgB, GPUQ_CAUSE_TERMINATE, 1020));
  EXPECT_EQ(Of(m, kCgA, GPUQ_CAUSE_TERMINATE, false).preemptions, 1u);
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_TERMINATE, true).preemptions, 0u);
}

TEST(PreemptionModelTest, ASeededProcessIsKnownAsTheOperationsOwner) {
  // Queues found in sysfs at start are keyed by tgid until a record names
  // the process's kernel key; its exit still takes only the others off.
  Model m;
  m.Apply(Active(kKeyA, kPidA, kCgA, 0));
  gpuq_queue_create_event seeded =
      Active(SeededProcessKey(kPidB), kPidB, kCgB, 0);
  seeded.flags = GPUQ_CREATE_F_SEEDED;
  seeded.ring_address = 0;  // sysfs tells no addresses
  seeded.percentage = 0;
  m.Apply(seeded);
  m.Apply(Unmap(kKeyB, kPidB, kCgB, GPUQ_CAUSE_TERMINATE, 1000, 10));
  EXPECT_EQ(Of(m, kCgA, GPUQ_CAUSE_TERMINATE, false).preemptions, 1u);
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_TERMINATE, true).preemptions, 0u);
  // Another's operation takes the seeded queue off like any other.
  m.Apply(Map(kKeyB, kPidB, kCgB, GPUQ_CAUSE_TERMINATE, 1020));
  m.Apply(Unmap(kKeyA, kPidA, kCgA, GPUQ_CAUSE_UPDATE, 2000, 10));
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_UPDATE, false).preemptions, 1u);
}

TEST(PreemptionModelTest, NothingIsTakenOffARunlistThatIsNotMapped) {
  Model m = Shared();
  // The scheduler hangs: the queues are off until the map after the reset,
  // and the unmap before that map finds nothing mapped.
  m.Apply(Unmap(kKeyA, kPidA, kCgA, GPUQ_CAUSE_UPDATE, 1000, 9000, -62));
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_UPDATE, false).preemptions, 1u);
  m.Apply(Unmap(kKeyA, kPidA, kCgA, GPUQ_CAUSE_UPDATE, 20000, 10));
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_UPDATE, false).preemptions, 1u);
  m.Apply(Map(kKeyA, kPidA, kCgA, GPUQ_CAUSE_UPDATE, 30000, -5));
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_UPDATE, false).off_ns, 0u)
      << "a failed map puts nothing back";
  m.Apply(Map(kKeyA, kPidA, kCgA, GPUQ_CAUSE_UPDATE, 31000));
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_UPDATE, false).off_ns, 30000 * kUs);
  // An unknown cause (reset, suspend) preempts everyone, caused by another.
  m.Apply(Unmap(0, 0, 0, GPUQ_CAUSE_UNKNOWN, 40000, 10));
  EXPECT_EQ(Of(m, kCgA, GPUQ_CAUSE_UNKNOWN, false).preemptions, 1u);
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_UNKNOWN, false).preemptions, 1u);
}

TEST(PreemptionModelTest, AQueueMappedBeforeItsCreateRecordIsAVictim) {
  // amdkfd maps a new queue inside create_queue_cpsch; its create record is
  // written later (kfd_procfs_add_queue, or the ioctl's return in
  // args-kprobe). A's create runs in between: B's new queue is taken off.
  Model m;
  m.Apply(Active(kKeyA, kPidA, kCgA, 0));
  m.Apply(Unmap(kKeyB, kPidB, kCgB, GPUQ_CAUSE_CREATE, 100, 10));
  m.Apply(Map(kKeyB, kPidB, kCgB, GPUQ_CAUSE_CREATE, 150));
  m.Apply(Unmap(kKeyA, kPidA, kCgA, GPUQ_CAUSE_CREATE, 200, 10));
  m.Apply(Map(kKeyA, kPidA, kCgA, GPUQ_CAUSE_CREATE, 260));
  m.Apply(Active(kKeyB, kPidB, kCgB, 0));
  m.Apply(Active(kKeyA, kPidA, kCgA, 1));
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_CREATE, false).preemptions, 1u);
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_CREATE, false).off_ns, 60 * kUs);
  EXPECT_EQ(Of(m, kCgA, GPUQ_CAUSE_CREATE, false).preemptions, 1u);
  EXPECT_EQ(Of(m, kCgA, GPUQ_CAUSE_CREATE, true).preemptions, 1u);
  // Its record came: B's queue is one queue, not two.
  m.Apply(Unmap(kKeyA, kPidA, kCgA, GPUQ_CAUSE_UPDATE, 1000, 10));
  m.Apply(Map(kKeyA, kPidA, kCgA, GPUQ_CAUSE_UPDATE, 1100));
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_UPDATE, false).preemptions, 1u);
  EXPECT_EQ(m.Series().queue_series.size(), 2u);
}

TEST(PreemptionModelTest, AProcessGoneBeforeItsCreateRecordHoldsNothing) {
  // B's create mapped its queue, then B exited before the record (or the
  // record was lost): its queue stays off every later count.
  Model m;
  m.Apply(Active(kKeyA, kPidA, kCgA, 0));
  m.Apply(Unmap(kKeyB, kPidB, kCgB, GPUQ_CAUSE_CREATE, 100, 10));
  m.Apply(Map(kKeyB, kPidB, kCgB, GPUQ_CAUSE_CREATE, 150));
  m.Apply(Exit(kKeyB, kPidB, kCgB));
  m.Apply(Unmap(kKeyA, kPidA, kCgA, GPUQ_CAUSE_UPDATE, 1000, 10));
  m.Apply(Map(kKeyA, kPidA, kCgA, GPUQ_CAUSE_UPDATE, 1100));
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_UPDATE, false).preemptions, 0u);
  EXPECT_EQ(Of(m, kCgA, GPUQ_CAUSE_UPDATE, true).preemptions, 1u);
  // A failed create map puts nothing on the runlist.
  m.Apply(Unmap(kKeyB, kPidB, kCgB, GPUQ_CAUSE_CREATE, 2000, 10));
  m.Apply(Map(kKeyB, kPidB, kCgB, GPUQ_CAUSE_CREATE, 2100, -62));
  m.Apply(Map(kKeyA, kPidA, kCgA, GPUQ_CAUSE_UPDATE, 2200));
  m.Apply(Unmap(kKeyA, kPidA, kCgA, GPUQ_CAUSE_UPDATE, 3000, 10));
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_UPDATE, false).preemptions, 0u);
}

TEST(PreemptionModelTest, MesTakesOffOnlyTheUpdatedQueue) {
  Model m = Shared();
  gpuq_runlist_event remove =
      Runlist(kKeyA, kPidA, kCgA, kPreemptedGpu, GPUQ_RUNLIST_MES_REMOVE,
              GPUQ_CAUSE_UPDATE, 20 * kUs);
  remove.queue_id = 0;
  remove.hdr.ts_ns = 1020 * kUs;
  m.Apply(remove);
  gpuq_runlist_event add = Runlist(kKeyA, kPidA, kCgA, kPreemptedGpu,
                                   GPUQ_RUNLIST_MES_ADD, GPUQ_CAUSE_UPDATE, 0);
  add.queue_id = 0;
  add.hdr.ts_ns = 1500 * kUs;
  m.Apply(add);
  const PreemptionSeries a =
      Of(m, kCgA, GPUQ_CAUSE_UPDATE, true, Scheduler::kMes);
  EXPECT_EQ(a.preemptions, 1u);
  EXPECT_EQ(a.off_ns, 500 * kUs);
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_UPDATE, false, Scheduler::kMes).preemptions,
            0u);
  // A destroy's remove takes a queue that does not stay.
  remove.cause = GPUQ_CAUSE_DESTROY;
  m.Apply(remove);
  EXPECT_EQ(Of(m, kCgA, GPUQ_CAUSE_DESTROY, true, Scheduler::kMes).preemptions,
            0u);
  // An update's remove whose queue is destroyed before its add: the window
  // ends with the queue.
  remove.cause = GPUQ_CAUSE_UPDATE;
  remove.hdr.ts_ns = 2020 * kUs;
  m.Apply(remove);
  gpuq_queue_destroy_event gone =
      Destroy(kKeyA, kPidA, kCgA, kPreemptedGpu, 0, GPUQ_QUEUE_COMPUTE);
  gone.hdr.ts_ns = 2300 * kUs;
  m.Apply(gone);
  EXPECT_EQ(Of(m, kCgA, GPUQ_CAUSE_UPDATE, true, Scheduler::kMes).off_ns,
            (500 + 300) * kUs);
  // Closed for good: a later add of that id puts nothing more back.
  add.hdr.ts_ns = 3000 * kUs;
  m.Apply(add);
  EXPECT_EQ(Of(m, kCgA, GPUQ_CAUSE_UPDATE, true, Scheduler::kMes).off_ns,
            (500 + 300) * kUs);
}

TEST(QueuePriorityTest, LiveQueuesByAmdkfdsPipePriority) {
  // amdkfd's pipe_priority_map: 0-6 low, 7-10 medium, 11-15 high.
  EXPECT_EQ(PriorityClassOf(0), PriorityClass::kLow);
  EXPECT_EQ(PriorityClassOf(6), PriorityClass::kLow);
  EXPECT_EQ(PriorityClassOf(7), PriorityClass::kMedium);
  EXPECT_EQ(PriorityClassOf(10), PriorityClass::kMedium);
  EXPECT_EQ(PriorityClassOf(11), PriorityClass::kHigh);
  EXPECT_EQ(PriorityClassOf(15), PriorityClass::kHigh);
  EXPECT_EQ(PriorityClassOf(16), PriorityClass::kUnknown);

  Model m;
  gpuq_queue_create_event high = Active(kKeyA, kPidA, kCgA, 0);
  high.priority = 15;
  m.Apply(high);
  gpuq_queue_create_event normal = Active(kKeyA, kPidA, kCgA, 1);
  normal.priority = 7;
  m.Apply(normal);
  gpuq_queue_create_event low = Active(kKeyB, kPidB, kCgB, 0);
  low.priority = 0;
  m.Apply(low);
  gpuq_queue_create_event seeded = Active(SeededProcessKey(4), 4, kCgB, 1);
  seeded.flags = GPUQ_CREATE_F_SEEDED;
  seeded.priority = 0;  // sysfs shows none: unknown, not low
  m.Apply(seeded);
  auto n = [&](uint64_t cg, PriorityClass c) -> uint64_t {
    const auto by = m.Series().queues_by_priority;
    auto it = by.find({cg, kPreemptedGpu, c});
    return it == by.end() ? 0 : it->second;
  };
  EXPECT_EQ(n(kCgA, PriorityClass::kHigh), 1u);
  EXPECT_EQ(n(kCgA, PriorityClass::kMedium), 1u);
  EXPECT_EQ(n(kCgB, PriorityClass::kLow), 1u);
  EXPECT_EQ(n(kCgB, PriorityClass::kUnknown), 1u);
  // The priorities asked for, each its own: 15, 7, 0 and unknown.
  auto asked = [&](uint64_t cg, uint32_t priority) -> uint64_t {
    const auto by = m.Series().queues_by_requested_priority;
    auto it = by.find({cg, kPreemptedGpu, priority});
    return it == by.end() ? 0 : it->second;
  };
  EXPECT_EQ(asked(kCgA, 15), 1u);
  EXPECT_EQ(asked(kCgA, 7), 1u);
  EXPECT_EQ(asked(kCgB, 0), 1u);
  EXPECT_EQ(asked(kCgB, kUnknownQueuePriority), 1u);
  EXPECT_EQ(m.Series().queues_by_requested_priority.size(), 4u);
  m.Apply(Destroy(kKeyA, kPidA, kCgA, kPreemptedGpu, 0, GPUQ_QUEUE_COMPUTE));
  EXPECT_EQ(n(kCgA, PriorityClass::kHigh), 0u) << "a gauge of live queues";
  EXPECT_EQ(asked(kCgA, 15), 0u);
}

// AMDKFD_IOC_UPDATE_QUEUE as the kernel side reports it.
gpuq_queue_update_event Update(uint64_t key, uint32_t pid, uint64_t cg,
                               uint32_t qid, uint32_t percentage,
                               uint32_t priority) {
  gpuq_queue_update_event e{};
  e.hdr = Hdr(GPUQ_EV_QUEUE_UPDATE, key, pid, cg);
  e.hdr.size = sizeof(e);
  e.gpu_id = kPreemptedGpu;
  e.queue_id = qid;
  e.ring_address = 0x7f0000000000ull;
  e.ring_size = 1u << 20;
  e.percentage = percentage;
  e.priority = priority;
  return e;
}

TEST(QueuePriorityTest, AnUpdateMovesTheQueueToItsNewClass) {
  Model m;
  m.Apply(Active(kKeyA, kPidA, kCgA, 0));  // priority 7: medium
  gpuq_queue_create_event seeded = Active(SeededProcessKey(4), 4, kCgB, 1);
  seeded.flags = GPUQ_CREATE_F_SEEDED;
  m.Apply(seeded);
  auto n = [&](uint64_t cg, PriorityClass c) -> uint64_t {
    const auto by = m.Series().queues_by_priority;
    auto it = by.find({cg, kPreemptedGpu, c});
    return it == by.end() ? 0 : it->second;
  };
  m.Apply(Update(kKeyA, kPidA, kCgA, 0, 100, 15));
  EXPECT_EQ(n(kCgA, PriorityClass::kMedium), 0u);
  EXPECT_EQ(n(kCgA, PriorityClass::kHigh), 1u);
  // A queue found in sysfs (priority unknown) is known once updated; the
  // update names its owner by kernel key, the model finds it by tgid.
  EXPECT_EQ(n(kCgB, PriorityClass::kUnknown), 1u);
  m.Apply(Update(0xffff888100000400ull, 4, kCgB, 1, 100, 2));
  EXPECT_EQ(n(kCgB, PriorityClass::kUnknown), 0u);
  EXPECT_EQ(n(kCgB, PriorityClass::kLow), 1u);
  // An update of a queue the model never saw is a drop, not a queue.
  m.Apply(Update(kKeyA, kPidA, kCgA, 9, 100, 15));
  EXPECT_EQ(m.Series().model_drops.unknown_queue, 1u);
  EXPECT_EQ(n(kCgA, PriorityClass::kHigh), 1u);
}

// AMDKFD_IOC_SET_CU_MASK as the kernel side reports it: the first `bits`
// CUs enabled in a mask of `words` words.
gpuq_queue_cu_mask_event CuMask(uint64_t key, uint32_t pid, uint64_t cg,
                                uint32_t qid, uint32_t words, uint32_t bits) {
  gpuq_queue_cu_mask_event e{};
  e.hdr = Hdr(GPUQ_EV_QUEUE_CU_MASK, key, pid, cg);
  e.hdr.size = sizeof(e);
  e.gpu_id = kPreemptedGpu;
  e.queue_id = qid;
  e.num_cu_mask = 32 * words;
  e.words_read = words > GPUQ_CU_MASK_WORDS ? GPUQ_CU_MASK_WORDS : words;
  for (uint32_t cu = 0; cu < bits && cu < 32 * e.words_read; ++cu) {
    e.mask[cu / 32] |= 1u << (cu % 32);
  }
  return e;
}

TEST(QueueCuMaskTest, ClassesAgainstTheGpusActiveCus) {
  // An MI300X node: simd_count 1216 / simd_per_cu 4 = 304 CUs.
  const gpuq_gpu_info_record gpu = GpuInfo(kPreemptedGpu, 1);
  ASSERT_EQ(FromRecord(gpu).ActiveCus(), 304u);
  const auto of = [](const gpuq_queue_cu_mask_event& e) {
    return ClassifyCuMask(e, 304);
  };
  EXPECT_EQ(of(CuMask(kKeyA, kPidA, kCgA, 0, 10, 320)), CuMaskClass::kAllCus);
  EXPECT_EQ(of(CuMask(kKeyA, kPidA, kCgA, 0, 10, 304)), CuMaskClass::kAllCus)
      << "bits past the GPU's CUs do not matter";
  EXPECT_EQ(of(CuMask(kKeyA, kPidA, kCgA, 0, 10, 303)),
            CuMaskClass::kRestricted);
  EXPECT_EQ(of(CuMask(kKeyA, kPidA, kCgA, 0, 9, 288)), CuMaskClass::kRestricted)
      << "CUs beyond the mask's bits are off";
  gpuq_queue_cu_mask_event hole = CuMask(kKeyA, kPidA, kCgA, 0, 10, 320);
  hole.mask[4] &= ~(1u << 7);  // CU 135
  EXPECT_EQ(of(hole), CuMaskClass::kRestricted);
  // amdkfd uses at most 1024 bits: a longer mask is its first 32 words.
  EXPECT_EQ(ClassifyCuMask(CuMask(kKeyA, kPidA, kCgA, 0, 40, 1280), 1024),
            CuMaskClass::kAllCus);
  gpuq_queue_cu_mask_event unread = CuMask(kKeyA, kPidA, kCgA, 0, 10, 320);
  unread.words_read = 0;
  EXPECT_EQ(of(unread), CuMaskClass::kUnknown);
  EXPECT_EQ(ClassifyCuMask(CuMask(kKeyA, kPidA, kCgA, 0, 10, 320), 0),
            CuMaskClass::kUnknown)
      << "a GPU whose CUs are not known";
}

TEST(QueueCuMaskTest, LiveQueuesGivenAMaskByClass) {
  Model m;
  m.Apply(GpuInfo(kPreemptedGpu, 1));
  m.Apply(Active(kKeyA, kPidA, kCgA, 0));
  m.Apply(Active(kKeyA, kPidA, kCgA, 1));
  m.Apply(Active(kKeyB, kPidB, kCgB, 0));
  gpuq_queue_create_event seeded = Active(SeededProcessKey(4), 4, kCgB, 1);
  seeded.flags = GPUQ_CREATE_F_SEEDED;
  m.Apply(seeded);
  auto n = [&](uint64_t cg, CuMaskClass c) -> uint64_t {
    const auto by = m.Series().queues_cu_masked;
    auto it = by.find({cg, kPreemptedGpu, c});
    return it == by.end() ? 0 : it->second;
  };
  EXPECT_TRUE(m.Series().queues_cu_masked.empty())
      << "queues never given a mask run on every CU";
  m.Apply(CuMask(kKeyA, kPidA, kCgA, 0, 2, 64));  // 64 of 304: restricted
  m.Apply(CuMask(kKeyA, kPidA, kCgA, 1, 10, 320));
  EXPECT_EQ(n(kCgA, CuMaskClass::kRestricted), 1u);
  EXPECT_EQ(n(kCgA, CuMaskClass::kAllCus), 1u);
  // A later set replaces the class.
  m.Apply(CuMask(kKeyA, kPidA, kCgA, 0, 10, 320));
  EXPECT_EQ(n(kCgA, CuMaskClass::kRestricted), 0u);
  EXPECT_EQ(n(kCgA, CuMaskClass::kAllCus), 2u);
  // A queue found in sysfs: the set names its owner by kernel key.
  m.Apply(CuMask(0xffff888100000400ull, 4, kCgB, 1, 1, 16));
  EXPECT_EQ(n(kCgB, CuMaskClass::kRestricted), 1u);
  // A set on a queue the model never saw is a drop, not a queue.
  m.Apply(CuMask(kKeyB, kPidB, kCgB, 7, 1, 16));
  EXPECT_EQ(m.Series().model_drops.unknown_queue, 1u);
  EXPECT_EQ(n(kCgB, CuMaskClass::kRestricted), 1u);
  // A gauge of live queues.
  m.Apply(Destroy(kKeyA, kPidA, kCgA, kPreemptedGpu, 1, GPUQ_QUEUE_COMPUTE));
  EXPECT_EQ(n(kCgA, CuMaskClass::kAllCus), 1u);
}

TEST(QueueCuMaskTest, AGpuWithoutItsCusIsUnknown) {
  // A capture from before gpu_info carried simd_per_cu.
  Model m;
  gpuq_gpu_info_record old = GpuInfo(kPreemptedGpu, 1);
  old.simd_per_cu = 0;
  m.Apply(old);
  m.Apply(Active(kKeyA, kPidA, kCgA, 0));
  m.Apply(CuMask(kKeyA, kPidA, kCgA, 0, 2, 64));
  const auto by = m.Series().queues_cu_masked;
  ASSERT_EQ(by.size(), 1u);
  EXPECT_EQ(by.begin()->first,
            std::make_tuple(kCgA, kPreemptedGpu, CuMaskClass::kUnknown));
}

TEST(PreemptionModelTest, AQueueMadeInactiveByAnUpdateIsNotAVictim) {
  // ROCr suspends a queue with percentage 0 (AqlQueue::Suspend): amdkfd
  // unmaps it, and the runlist operations after that do not take it off.
  Model m;
  m.Apply(Active(kKeyA, kPidA, kCgA, 0));
  m.Apply(Active(kKeyB, kPidB, kCgB, 0));
  m.Apply(Update(kKeyA, kPidA, kCgA, 0, 0x100, 7));  // XCC 1, 0 percent
  m.Apply(Unmap(kKeyB, kPidB, kCgB, GPUQ_CAUSE_CREATE, 100, 10));
  m.Apply(Map(kKeyB, kPidB, kCgB, GPUQ_CAUSE_CREATE, 150));
  EXPECT_EQ(Of(m, kCgA, GPUQ_CAUSE_CREATE, false).preemptions, 0u);
  EXPECT_EQ(Of(m, kCgB, GPUQ_CAUSE_CREATE, true).preemptions, 1u);
  // Active again: taken off by the next one.
  m.Apply(Update(kKeyA, kPidA, kCgA, 0, 100, 7));
  m.Apply(Unmap(kKeyB, kPidB, kCgB, GPUQ_CAUSE_CREATE, 200, 10));
  m.Apply(Map(kKeyB, kPidB, kCgB, GPUQ_CAUSE_CREATE, 250));
  EXPECT_EQ(Of(m, kCgA, GPUQ_CAUSE_CREATE, false).preemptions, 1u);
}

TEST(PreemptionModelTest, AGoneContainerLeavesNoOpenWindow) {
  Model m = Shared();
  m.Apply(Unmap(kKeyA, kPidA, kCgA, GPUQ_CAUSE_UPDATE, 1000, 10));
  m.EraseCgroup(kCgB);
  m.Apply(Map(kKeyA, kPidA, kCgA, GPUQ_CAUSE_UPDATE, 1100));
  // A's window stayed open and closed at the map; B's went with B.
  EXPECT_EQ(Of(m, kCgA, GPUQ_CAUSE_UPDATE, true).off_ns, 100 * kUs);
  for (const auto& [key, series] : m.Series().preemptions) {
    EXPECT_NE(key.cgroup_id, kCgB) << "a closed window brought B back";
  }
}

}  // namespace
}  // namespace gpuq::preemption_model_test
