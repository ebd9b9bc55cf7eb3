// Host BPF: the runlist and eviction records as the kernel side
// writes them (bpf/runlist_events.bpf.h, bpf/eviction_events.bpf.h), driven
// on this kernel by tests/bpf/progs/sched_probe.bpf.c and decoded by
// BpfEventSource. Needs root.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <vector>

#include "loader/kernel_features.h"
#include "sched_probe.skel.h"
#include "sources/bpf_source.h"

namespace gpuq {
namespace {

constexpr uint64_t kProcess = 0xffff888112345600ull;
constexpr uint64_t kCgroup = 4242;
constexpr uint32_t kTgid = 777;
constexpr uint32_t kGpu = 0x1f2e;

class SchedEventsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HasBpfPrivileges()) {
      GTEST_SKIP() << "needs root (CAP_BPF+CAP_PERFMON or CAP_SYS_ADMIN) to "
                      "load BPF programs";
    }
    skel_ = sched_probe__open();
    ASSERT_NE(skel_, nullptr);
    skel_->rodata->target_tgid = static_cast<uint32_t>(getpid());
    ASSERT_EQ(sched_probe__load(skel_), 0);
    ASSERT_EQ(sched_probe__attach(skel_), 0);
    source_ = std::make_unique<BpfEventSource>(bpf_map__fd(skel_->maps.events),
                                               bpf_map__fd(skel_->maps.drops));
    ASSERT_TRUE(source_->Ok()) << source_->Error();
    bss().owner_key = kProcess;
    bss().owner_cgroup = kCgroup;
    bss().owner_tgid = kTgid;
    bss().gpu_id = kGpu;
  }
  void TearDown() override {
    source_.reset();
    if (skel_ != nullptr) sched_probe__destroy(skel_);
  }
  sched_probe::sched_probe__bss& bss() { return *skel_->bss; }
  /// One getppid(2): the probe runs the configured action once.
  std::vector<Event> Run() {
    syscall(SYS_getppid);
    std::vector<Event> events;
    Event e;
    while (source_->Next(&e, std::chrono::milliseconds(100)) ==
           NextStatus::kOk) {
      events.push_back(e);
    }
    return events;
  }
  void Evict(uint32_t kind, uint32_t before, uint32_t after) {
    bss().action = 3;
    bss().kind = kind;
    bss().evicted_before = before;
    bss().evicted_after = after;
  }
  static void ExpectOwner(const gpuq_event_header& h) {
    EXPECT_EQ(h.process_key, kProcess);
    EXPECT_EQ(h.cgroup_id, kCgroup);
    EXPECT_EQ(h.tgid, kTgid);
  }

  sched_probe* skel_ = nullptr;
  std::unique_ptr<BpfEventSource> source_;
};

TEST_F(SchedEventsTest, RunlistOpTakesCauseAndOwnerFromTheOpSlot) {
  bss().action = 1;
  bss().with_slot = 1;
  bss().slot_cause = GPUQ_CAUSE_TERMINATE;
  bss().op = GPUQ_RUNLIST_UNMAP;
  bss().filter = 2;  // KFD_UNMAP_QUEUES_FILTER_DYNAMIC_QUEUES
  bss().active_queues = 5;
  bss().ret = -62;  // -ETIME: the HWS hung
  const std::vector<Event> events = Run();
  ASSERT_EQ(events.size(), 1u);
  const auto* e = std::get_if<gpuq_runlist_event>(&events[0]);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->hdr.size, sizeof(gpuq_runlist_event));
  ExpectOwner(e->hdr);
  EXPECT_EQ(e->gpu_id, kGpu);
  EXPECT_EQ(e->op, static_cast<uint32_t>(GPUQ_RUNLIST_UNMAP));
  EXPECT_EQ(e->cause, static_cast<uint32_t>(GPUQ_CAUSE_TERMINATE));
  EXPECT_EQ(e->filter, 2u);
  EXPECT_EQ(e->ret, -62);
  EXPECT_EQ(e->active_queues, 5u);
  EXPECT_EQ(e->queue_id, 0u);
  EXPECT_LT(e->duration_ns, e->hdr.ts_ns);  // end minus a real start
}

// An HWS map's exit adds the runlist it read (runlist.bpf.h reads it from
// amdkfd by CO-RE; the QEMU simulator tier covers that read): the record
// carries it whole; other operations carry zeros there.
TEST_F(SchedEventsTest, AMapCarriesTheRunlistItLeft) {
  bss().action = 1;
  bss().op = GPUQ_RUNLIST_MAP;
  bss().with_state = 1;
  bss().st_flags = GPUQ_RUNLIST_F_RUNLIST_READ | GPUQ_RUNLIST_F_OVERSUBSCRIBED;
  bss().st_processes = 3;
  bss().st_compute_queues = 25;
  bss().st_gws_queues = 1;
  bss().st_process_limit = 2;
  bss().st_compute_queue_limit = 24;
  std::vector<Event> events = Run();
  ASSERT_EQ(events.size(), 1u);
  const auto* e = std::get_if<gpuq_runlist_event>(&events[0]);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->flags,
            GPUQ_RUNLIST_F_RUNLIST_READ | GPUQ_RUNLIST_F_OVERSUBSCRIBED);
  EXPECT_EQ(e->processes, 3u);
  EXPECT_EQ(e->compute_queues, 25u);
  EXPECT_EQ(e->gws_queues, 1u);
  EXPECT_EQ(e->process_limit, 2u);
  EXPECT_EQ(e->compute_queue_limit, 24u);
  bss().with_state = 0;
  events = Run();
  ASSERT_EQ(events.size(), 1u);
  e = std::get_if<gpuq_runlist_event>(&events[0]);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->flags, 0u);
  EXPECT_EQ(e->processes, 0u);
  EXPECT_EQ(e->compute_queue_limit, 0u);
}

TEST_F(SchedEventsTest, RunlistOpOutsideAnyOperationHasNoOwner) {
  bss().action = 1;
  bss().op = GPUQ_RUNLIST_MES_ADD;
  bss().queue_id = 3;
  const std::vector<Event> events = Run();
  ASSERT_EQ(events.size(), 1u);
  const auto* e = std::get_if<gpuq_runlist_event>(&events[0]);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->cause, static_cast<uint32_t>(GPUQ_CAUSE_UNKNOWN));
  EXPECT_EQ(e->hdr.process_key, 0u);
  EXPECT_EQ(e->hdr.tgid, 0u);
  EXPECT_EQ(e->op, static_cast<uint32_t>(GPUQ_RUNLIST_MES_ADD));
  EXPECT_EQ(e->queue_id, 3u);
  EXPECT_EQ(e->ret, 0);
}

TEST_F(SchedEventsTest, ReturnWithoutEntryWritesNothing) {
  bss().action = 2;  // e.g. the agent attached mid-call
  bss().op = GPUQ_RUNLIST_MAP;
  EXPECT_TRUE(Run().empty());
}

TEST_F(SchedEventsTest, OnlyRealTransitionsAreEvictions) {
  bss().with_trigger = 1;
  bss().trigger_process = kProcess;
  bss().trigger = GPUQ_TRIGGER_TTM;
  bss().queues = 4;

  Evict(GPUQ_EVICTION_EVICT, 0, 1);
  std::vector<Event> events = Run();
  // The unmap it ran, attributed to it, then the eviction at its return.
  ASSERT_EQ(events.size(), 2u);
  const auto* unmap = std::get_if<gpuq_runlist_event>(&events[0]);
  ASSERT_NE(unmap, nullptr);
  EXPECT_EQ(unmap->cause, static_cast<uint32_t>(GPUQ_CAUSE_EVICT));
  ExpectOwner(unmap->hdr);
  const auto* evict = std::get_if<gpuq_eviction_event>(&events[1]);
  ASSERT_NE(evict, nullptr);
  EXPECT_EQ(evict->hdr.size, sizeof(gpuq_eviction_event));
  ExpectOwner(evict->hdr);
  EXPECT_EQ(evict->gpu_id, kGpu);
  EXPECT_EQ(evict->kind, static_cast<uint32_t>(GPUQ_EVICTION_EVICT));
  EXPECT_EQ(evict->trigger, static_cast<uint32_t>(GPUQ_TRIGGER_TTM));
  EXPECT_EQ(evict->queues, 4u);
  EXPECT_EQ(evict->ret, 0);
  EXPECT_GE(evict->duration_ns, unmap->duration_ns);  // it contains the unmap

  // Nested: 1 -> 2 and 2 -> 1 move no queue.
  Evict(GPUQ_EVICTION_EVICT, 1, 2);
  events = Run();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NE(std::get_if<gpuq_runlist_event>(&events[0]), nullptr);
  Evict(GPUQ_EVICTION_RESTORE, 2, 1);
  events = Run();
  ASSERT_EQ(events.size(), 1u);
  const auto* inner = std::get_if<gpuq_runlist_event>(&events[0]);
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->cause, static_cast<uint32_t>(GPUQ_CAUSE_RESTORE));

  // 1 -> 0: the restore; its trigger is never the eviction's.
  Evict(GPUQ_EVICTION_RESTORE, 1, 0);
  bss().ret = -5;
  events = Run();
  ASSERT_EQ(events.size(), 2u);
  const auto* restore = std::get_if<gpuq_eviction_event>(&events[1]);
  ASSERT_NE(restore, nullptr);
  EXPECT_EQ(restore->kind, static_cast<uint32_t>(GPUQ_EVICTION_RESTORE));
  EXPECT_EQ(restore->trigger, static_cast<uint32_t>(GPUQ_TRIGGER_UNKNOWN));
  EXPECT_EQ(restore->ret, -5);
}

TEST_F(SchedEventsTest, TriggerOnlyForTheSameProcessAndKnownValues) {
  bss().with_trigger = 1;
  bss().trigger_process = kProcess + 0x1000;  // another kfd_process
  bss().trigger = GPUQ_TRIGGER_SVM;
  Evict(GPUQ_EVICTION_EVICT, 0, 1);
  std::vector<Event> events = Run();
  ASSERT_EQ(events.size(), 2u);
  const auto* other = std::get_if<gpuq_eviction_event>(&events[1]);
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->trigger, static_cast<uint32_t>(GPUQ_TRIGGER_UNKNOWN));

  bss().trigger_process = kProcess;
  bss().trigger = 9;  // a trigger this ABI does not know
  events = Run();
  ASSERT_EQ(events.size(), 2u);
  const auto* unknown = std::get_if<gpuq_eviction_event>(&events[1]);
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(unknown->trigger, static_cast<uint32_t>(GPUQ_TRIGGER_UNKNOWN));

  bss().with_trigger = 0;  // evicted outside kfd_process_evict_queues
  events = Run();
  ASSERT_EQ(events.size(), 2u);
  const auto* none = std::get_if<gpuq_eviction_event>(&events[1]);
  ASSERT_NE(none, nullptr);
  EXPECT_EQ(none->trigger, static_cast<uint32_t>(GPUQ_TRIGGER_UNKNOWN));
}

// ROCr's amd_queue_t as the create hook finds it at write_ptr - 56 (hsa.h:
// hsa_queue_t at 0, write_dispatch_id at 56).
struct alignas(64) FakeAmdQueue {
  uint32_t type = 0, features = 0;
  uint64_t base_address = 0;
  uint64_t doorbell_signal = 0;
  uint32_t size = 0, reserved1 = 0;
  uint64_t id = 0;
  uint64_t caps_and_pad[2] = {};
  uint64_t write_dispatch_id = 0;
  uint64_t rest[25] = {};
};
static_assert(offsetof(FakeAmdQueue, write_dispatch_id) == 56, "amd_queue_t");

class RocrLayoutTest : public SchedEventsTest {
 protected:
  const gpuq_queue_create_event* Create(uint64_t ring, uint64_t ring_size) {
    bss().action = 4;
    bss().ring_address = ring;
    bss().ring_size = ring_size;
    bss().write_ptr = reinterpret_cast<uint64_t>(&q_.write_dispatch_id);
    events_ = Run();
    if (events_.size() != 1) return nullptr;
    return std::get_if<gpuq_queue_create_event>(&events_[0]);
  }
  FakeAmdQueue q_;
  std::vector<Event> events_;
};

TEST_F(RocrLayoutTest, ValidatedQueueGivesDoorbellAndStartIndex) {
  static uint8_t ring[4096 * 64] __attribute__((aligned(4096)));
  q_.base_address = reinterpret_cast<uint64_t>(ring);
  q_.size = 4096;  // packets
  q_.doorbell_signal = 0x7f00deadbe00ull;
  q_.write_dispatch_id = 1000;
  const auto* e = Create(q_.base_address, sizeof(ring));
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->flags & GPUQ_CREATE_F_ROCR_LAYOUT, GPUQ_CREATE_F_ROCR_LAYOUT);
  EXPECT_EQ(e->doorbell_handle, 0x7f00deadbe00ull);
  EXPECT_EQ(e->write_index_at_create, 1000u);
}

TEST_F(RocrLayoutTest, MismatchedRingLeavesTheQueueOpaque) {
  q_.base_address = 0x10000;
  q_.size = 4096;
  q_.doorbell_signal = 0x1234;
  q_.write_dispatch_id = 7;
  // Another ring (SDMA, or not ROCr): base differs.
  const gpuq_queue_create_event* e = Create(0x20000, 4096 * 64);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->flags, 0u);
  EXPECT_EQ(e->doorbell_handle, 0u);
  EXPECT_EQ(e->write_index_at_create, 0u);
  // Same base, size not packets * 64.
  e = Create(0x10000, 4096 * 64 + 8);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->flags, 0u);
  EXPECT_EQ(e->doorbell_handle, 0u);
}

TEST_F(RocrLayoutTest, UnreadableWritePointerLeavesTheQueueOpaque) {
  bss().action = 4;
  bss().ring_address = 0x10000;
  bss().ring_size = 4096;
  bss().write_ptr = 56 + 8;  // the page at 8 is never mapped
  const std::vector<Event> events = Run();
  ASSERT_EQ(events.size(), 1u);
  const auto* e = std::get_if<gpuq_queue_create_event>(&events[0]);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->flags, 0u);
  EXPECT_EQ(e->doorbell_handle, 0u);
  EXPECT_EQ(e->write_index_at_create, 0u);
}

}  // namespace
}  // namespace gpuq
