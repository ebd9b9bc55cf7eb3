// Reconciler (model/reconciler.h): a difference between the model and KFD
// sysfs is corrected only when two consecutive passes see it, because a
// queue's sysfs entry and its kernel event are not atomic and one pass can
// catch the gap in between.
#include "model/reconciler.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <vector>

#include "model/model.h"
#include "sources/kfd_sysfs.h"

namespace gpuq {
namespace {

SysfsQueue InSysfs(uint32_t pid, uint32_t qid, uint32_t gpu = 11437) {
  SysfsQueue q;
  q.pid = pid;
  q.queue_id = qid;
  q.gpu_id = gpu;
  return q;
}

QueueState InModel(uint32_t tgid, uint32_t qid, uint32_t gpu = 11437) {
  QueueState q;
  q.process_key = 0xffff888100000000ull + tgid;
  q.tgid = tgid;
  q.queue_id = qid;
  q.gpu_id = gpu;
  return q;
}

ReconcileDiff Diff(std::vector<SysfsQueue> missing_in_model,
                   std::vector<QueueState> missing_in_sysfs,
                   std::map<uint32_t, int64_t> drift = {}) {
  ReconcileDiff d;
  d.missing_in_model = std::move(missing_in_model);
  d.missing_in_sysfs = std::move(missing_in_sysfs);
  d.drift_per_gpu = std::move(drift);
  return d;
}

TEST(ReconcilerTest, DifferenceSeenOnceIsNotCorrected) {
  Reconciler r;
  const Reconciler::Actions a =
      r.Next(Diff({InSysfs(10, 0)}, {InModel(20, 1)}));
  EXPECT_TRUE(a.add.empty());
  EXPECT_TRUE(a.remove.empty());
  EXPECT_EQ(r.stats().added, 0u);
  EXPECT_EQ(r.stats().removed, 0u);
}

TEST(ReconcilerTest, DifferenceSeenTwiceIsCorrected) {
  Reconciler r;
  r.Next(Diff({InSysfs(10, 0)}, {InModel(20, 1)}));
  const Reconciler::Actions a =
      r.Next(Diff({InSysfs(10, 0)}, {InModel(20, 1)}));
  ASSERT_EQ(a.add.size(), 1u);
  EXPECT_EQ(a.add[0].pid, 10u);
  EXPECT_EQ(a.add[0].queue_id, 0u);
  ASSERT_EQ(a.remove.size(), 1u);
  EXPECT_EQ(a.remove[0].tgid, 20u);
  EXPECT_EQ(a.remove[0].queue_id, 1u);
  // The QueueState handed back is the model's, so Forget() can find it.
  EXPECT_EQ(a.remove[0].process_key, 0xffff888100000000ull + 20);
}

TEST(ReconcilerTest, OnlyThePersistentPartIsCorrected) {
  Reconciler r;
  r.Next(Diff({InSysfs(10, 0), InSysfs(10, 1)}, {InModel(20, 1)}));
  // (10, 1) resolved itself; (10, 2) is new; (10, 0) and (20, 1) persist.
  const Reconciler::Actions a =
      r.Next(Diff({InSysfs(10, 0), InSysfs(10, 2)}, {InModel(20, 1)}));
  ASSERT_EQ(a.add.size(), 1u);
  EXPECT_EQ(a.add[0].queue_id, 0u);
  ASSERT_EQ(a.remove.size(), 1u);
  EXPECT_EQ(a.remove[0].tgid, 20u);
}

TEST(ReconcilerTest, SameQueueIdOfAnotherProcessIsAnotherDifference) {
  // Identity is (tgid, queue id): queue 0 of pid 10 then of pid 11 are two
  // different one-pass differences.
  Reconciler r;
  r.Next(Diff({InSysfs(10, 0)}, {}));
  const Reconciler::Actions a = r.Next(Diff({InSysfs(11, 0)}, {}));
  EXPECT_TRUE(a.add.empty());
}

TEST(ReconcilerTest, DifferenceThatDisappearsResets) {
  Reconciler r;
  r.Next(Diff({InSysfs(10, 0)}, {InModel(20, 1)}));
  // Gone in the next pass (the event arrived) ...
  Reconciler::Actions a = r.Next(Diff({}, {}));
  EXPECT_TRUE(a.add.empty());
  EXPECT_TRUE(a.remove.empty());
  // ... so seeing it again starts over: once is still not enough.
  a = r.Next(Diff({InSysfs(10, 0)}, {InModel(20, 1)}));
  EXPECT_TRUE(a.add.empty());
  EXPECT_TRUE(a.remove.empty());
  a = r.Next(Diff({InSysfs(10, 0)}, {InModel(20, 1)}));
  EXPECT_EQ(a.add.size(), 1u);
  EXPECT_EQ(a.remove.size(), 1u);
}

TEST(ReconcilerTest, AddAndRemoveAreTrackedSeparately) {
  // (10, 0) missing in the model, then missing in sysfs: not the same
  // difference twice, so neither is corrected.
  Reconciler r;
  r.Next(Diff({InSysfs(10, 0)}, {}));
  const Reconciler::Actions a = r.Next(Diff({}, {InModel(10, 0)}));
  EXPECT_TRUE(a.add.empty());
  EXPECT_TRUE(a.remove.empty());
}

TEST(ReconcilerTest, StatsCountRunsAndCorrections) {
  Reconciler r;
  EXPECT_EQ(r.stats().runs, 0u);
  r.Next(Diff({InSysfs(10, 0), InSysfs(10, 1)}, {InModel(20, 1)}));
  r.Next(Diff({InSysfs(10, 0), InSysfs(10, 1)}, {InModel(20, 1)}));
  r.Next(Diff({}, {}));
  EXPECT_EQ(r.stats().runs, 3u);
  EXPECT_EQ(r.stats().added, 2u);
  EXPECT_EQ(r.stats().removed, 1u);
  EXPECT_EQ(r.stats().errors, 0u);

  // A pass that could not read sysfs is a run and an error, nothing else.
  r.CountError();
  EXPECT_EQ(r.stats().runs, 4u);
  EXPECT_EQ(r.stats().errors, 1u);
  EXPECT_EQ(r.stats().added, 2u);
  EXPECT_EQ(r.stats().removed, 1u);
}

TEST(ReconcilerTest, DriftOfLastPassAndSetDrift) {
  Reconciler r;
  r.Next(Diff({InSysfs(10, 0, 1)}, {}, {{1, -1}, {2, 3}}));
  EXPECT_EQ(r.stats().drift_per_gpu,
            (std::map<uint32_t, int64_t>{{1, -1}, {2, 3}}));
  // After corrections the pipeline records what is left.
  r.SetDrift({{1, 0}});
  EXPECT_EQ(r.stats().drift_per_gpu, (std::map<uint32_t, int64_t>{{1, 0}}));
  // The next pass replaces it, it does not accumulate.
  r.Next(Diff({}, {}, {{2, 1}}));
  EXPECT_EQ(r.stats().drift_per_gpu, (std::map<uint32_t, int64_t>{{2, 1}}));
  // SetDrift does not count as a run.
  EXPECT_EQ(r.stats().runs, 2u);
}

}  // namespace
}  // namespace gpuq
