// Runlist oversubscription: the kernel's verdict at each HWS map, its
// reasons from the counts against the limits, and the seconds an
// oversubscribed runlist was on the GPU, through the Model as the pipeline
// drives it.
#include "model/oversubscription.h"

#include <gpuq/abi.h>
#include <gtest/gtest.h>

#include <cstdint>

#include "activity_builders.h"
#include "model/model.h"

namespace gpuq::oversubscription_test {
namespace {

constexpr uint32_t kOversubscribedGpu = 45312;
constexpr uint64_t kMs = 1000000ull;

size_t Reason(OversubscriptionReason r) { return static_cast<size_t>(r); }

/// A map that read its runlist: `processes` and `compute` against limits 2
/// and 4, the kernel's verdict `over`, returning at `ts`.
gpuq_runlist_event Map(uint64_t ts, uint32_t processes, uint32_t compute,
                       bool over) {
  gpuq_runlist_event e = Runlist(0, 0, 0, kOversubscribedGpu, GPUQ_RUNLIST_MAP,
                                 GPUQ_CAUSE_CREATE, 1 * kMs);
  e.hdr.ts_ns = ts;
  e.flags =
      GPUQ_RUNLIST_F_RUNLIST_READ | (over ? GPUQ_RUNLIST_F_OVERSUBSCRIBED : 0u);
  e.processes = processes;
  e.compute_queues = compute;
  e.process_limit = 2;
  e.compute_queue_limit = 4;
  return e;
}

gpuq_runlist_event Unmap(uint64_t ts, uint64_t duration) {
  gpuq_runlist_event e =
      Runlist(0, 0, 0, kOversubscribedGpu, GPUQ_RUNLIST_UNMAP,
              GPUQ_CAUSE_CREATE, duration);
  e.hdr.ts_ns = ts;
  return e;
}

OversubscriptionSeries Of(const Model& m) {
  return m.Series().oversubscription.at(kOversubscribedGpu);
}

TEST(OversubscriptionTest, AWindowRunsFromTheMapToTheUnmapsStart) {
  Model m;
  m.Apply(Map(100 * kMs, 3, 4, true));  // 3 processes > 2
  EXPECT_TRUE(Of(m).shape.oversubscribed);
  EXPECT_EQ(Of(m).oversubscribed_maps, 1u);
  EXPECT_EQ(Of(m).maps_by_reason[Reason(OversubscriptionReason::kProcesses)],
            1u);
  EXPECT_EQ(Of(m).oversubscribed_ns, 0u) << "counted when it ends";
  // Unmap returning at 350 ms after 50 ms: off the GPU from 300 ms.
  m.Apply(Unmap(350 * kMs, 50 * kMs));
  EXPECT_EQ(Of(m).oversubscribed_ns, 200 * kMs);
  // The next runlist fits: no window, the gauge follows the verdict.
  m.Apply(Map(400 * kMs, 2, 4, false));
  EXPECT_FALSE(Of(m).shape.oversubscribed);
  m.Apply(Unmap(500 * kMs, 1 * kMs));
  EXPECT_EQ(Of(m).oversubscribed_ns, 200 * kMs);
  EXPECT_EQ(Of(m).oversubscribed_maps, 1u);
}

TEST(OversubscriptionTest, AMapThatBuiltNothingNewCountsNothing) {
  // amdkfd's map returns early while a runlist is up: same runlist, same
  // window.
  Model m;
  m.Apply(Map(100 * kMs, 1, 5, true));
  m.Apply(Map(150 * kMs, 1, 5, true));
  EXPECT_EQ(Of(m).oversubscribed_maps, 1u);
  m.Apply(Unmap(201 * kMs, 1 * kMs));
  EXPECT_EQ(Of(m).oversubscribed_ns, 100 * kMs);
}

TEST(OversubscriptionTest, EveryReasonThatHeldAndOtherWhenNoneDid) {
  Model m;
  gpuq_runlist_event both = Map(100 * kMs, 3, 5, true);
  both.gws_queues = 2;
  m.Apply(both);
  const auto by = Of(m).maps_by_reason;
  EXPECT_EQ(by[Reason(OversubscriptionReason::kProcesses)], 1u);
  EXPECT_EQ(by[Reason(OversubscriptionReason::kComputeQueues)], 1u);
  EXPECT_EQ(by[Reason(OversubscriptionReason::kGwsQueues)], 1u);
  EXPECT_EQ(by[Reason(OversubscriptionReason::kOther)], 0u);
  m.Apply(Unmap(110 * kMs, 1 * kMs));
  // The kernel's verdict with every count within its limit and no XNACK
  // conflict read: a limit this kernel keeps elsewhere.
  m.Apply(Map(120 * kMs, 1, 1, true));
  EXPECT_EQ(Of(m).maps_by_reason[Reason(OversubscriptionReason::kOther)], 1u);
  EXPECT_EQ(Of(m).oversubscribed_maps, 2u);
  // A limit the agent could not read (0) explains nothing either.
  m.Apply(Unmap(130 * kMs, 1 * kMs));
  gpuq_runlist_event unread = Map(140 * kMs, 9, 9, true);
  unread.process_limit = 0;
  unread.compute_queue_limit = 0;
  m.Apply(unread);
  EXPECT_EQ(Of(m).maps_by_reason[Reason(OversubscriptionReason::kOther)], 2u);
}

TEST(OversubscriptionTest, AnXnackConflictIsItsOwnReasonBesideTheCounts) {
  Model m;
  // 6.16+ on a GPU that chains on it: the counts fit, the modes conflict.
  gpuq_runlist_event mixed = Map(100 * kMs, 2, 2, true);
  mixed.flags |= GPUQ_RUNLIST_F_XNACK_CONFLICT;
  m.Apply(mixed);
  EXPECT_TRUE(Of(m).shape.xnack_conflict);
  auto by = Of(m).maps_by_reason;
  EXPECT_EQ(by[Reason(OversubscriptionReason::kXnackConflict)], 1u);
  EXPECT_EQ(by[Reason(OversubscriptionReason::kOther)], 0u)
      << "the conflict explains the verdict";
  EXPECT_EQ(OversubscribedBecause(Of(m).shape), "xnack_conflict");
  m.Apply(Unmap(110 * kMs, 1 * kMs));
  // Both: a count over its limit and the conflict, each counted once.
  gpuq_runlist_event both = Map(120 * kMs, 3, 2, true);
  both.flags |= GPUQ_RUNLIST_F_XNACK_CONFLICT;
  m.Apply(both);
  by = Of(m).maps_by_reason;
  EXPECT_EQ(by[Reason(OversubscriptionReason::kProcesses)], 1u);
  EXPECT_EQ(by[Reason(OversubscriptionReason::kXnackConflict)], 2u);
  EXPECT_EQ(OversubscribedBecause(Of(m).shape),
            "processes 3/2, xnack_conflict");
  EXPECT_EQ(Of(m).oversubscribed_maps, 2u);
  m.Apply(Unmap(130 * kMs, 1 * kMs));
  // The flag without the verdict (never set so by the BPF side) is no
  // reason: a runlist that fits.
  gpuq_runlist_event fits = Map(140 * kMs, 1, 1, false);
  fits.flags |= GPUQ_RUNLIST_F_XNACK_CONFLICT;
  m.Apply(fits);
  EXPECT_FALSE(Of(m).shape.xnack_conflict);
  EXPECT_EQ(Of(m).oversubscribed_maps, 2u);
}

TEST(OversubscriptionTest, MapsThatDidNotReadTheRunlistLeaveNoSeries) {
  // The args-kprobe tier and captures before the fields: nothing known.
  Model m;
  gpuq_runlist_event args = Map(100 * kMs, 3, 5, true);
  args.flags = 0;
  m.Apply(args);
  m.Apply(Unmap(200 * kMs, 1 * kMs));
  EXPECT_TRUE(m.Series().oversubscription.empty());
  // A failed map built nothing that runs.
  gpuq_runlist_event failed = Map(300 * kMs, 3, 5, true);
  failed.ret = -62;
  m.Apply(failed);
  EXPECT_FALSE(Of(m).shape.oversubscribed);
  EXPECT_EQ(Of(m).oversubscribed_maps, 0u);
}

TEST(OversubscriptionTest, ShapeKeepsCountsAndLimits) {
  Model m;
  m.Apply(Map(100 * kMs, 3, 5, true));
  const RunlistShape s = Of(m).shape;
  EXPECT_EQ(s.entries[0], 3u);
  EXPECT_EQ(s.entries[1], 5u);
  EXPECT_EQ(s.limits[0], 2u);
  EXPECT_EQ(s.limits[1], 4u);
  EXPECT_EQ(s.limits[2], 1u);
}

}  // namespace
}  // namespace gpuq::oversubscription_test
