// Series lifetime: idle processes fold into their cgroup's remainder (so a
// container's totals never go down) and the series of a container that holds
// no queue for the grace period are removed (bounded memory, no stale
// series). Host processes only fold: the host never "goes away".
#include <gtest/gtest.h>

#include "event_builders.h"
#include "export/collector.h"
#include "model/model.h"
#include "model/pipeline.h"

namespace gpuq {
namespace {

constexpr uint64_t kSecond = 1000000000ull;

QueueSeries Total(const Model& m, uint64_t cgroup) {
  QueueSeries t;
  for (const auto& [key, s] : m.Series().queue_series) {
    if (key.cgroup_id != cgroup) continue;
    t.live += s.live;
    t.creates += s.creates;
    for (size_t r = 0; r < t.destroys.size(); ++r)
      t.destroys[r] += s.destroys[r];
  }
  return t;
}

TEST(RetireTest, IdleProcessFoldsIntoItsCgroupKeepingTotals) {
  Model m;
  m.SetNow(1 * kSecond);
  m.Apply(Create(0xffff888100000001, 10, 5, 1, 0));
  m.Apply(Create(0xffff888100000002, 11, 5, 1, 0));
  m.Apply(Destroy(0xffff888100000001, 10, 5, 1, 0, GPUQ_QUEUE_COMPUTE));
  m.SetNow(100 * kSecond);
  EXPECT_EQ(m.RetireIdleOwners(60 * kSecond), 1u) << "only pid 10 is idle";
  const QueueSeries t = Total(m, 5);
  EXPECT_EQ(t.live, 1u);
  EXPECT_EQ(t.creates, 2u);
  EXPECT_EQ(t.destroys[GPUQ_DESTROY_IOCTL], 1u);
  EXPECT_EQ(m.owners().count({5, 10}), 0u);
  EXPECT_EQ(m.owners().count({5, 11}), 1u);
  EXPECT_EQ(m.Series().queue_series.count({5, 0, 1, GPUQ_QUEUE_COMPUTE}), 1u);
}

// A folded or erased series is made anew by the owner's next queue, not
// counted where the old one was (the model finds series through an index).
TEST(RetireTest, AnOwnerBackAfterRetirementCountsInANewSeries) {
  Model m;
  m.SetNow(1 * kSecond);
  m.Apply(Create(0xffff888100000001, 10, 5, 1, 0));
  m.Apply(Destroy(0xffff888100000001, 10, 5, 1, 0, GPUQ_QUEUE_COMPUTE));
  m.SetNow(100 * kSecond);
  EXPECT_EQ(m.RetireIdleOwners(60 * kSecond), 1u);
  m.Apply(Create(0xffff888100000001, 10, 5, 1, 1));
  const auto series = [&m](uint64_t cgroup, uint32_t tgid) {
    return m.Series().queue_series.at({cgroup, tgid, 1, GPUQ_QUEUE_COMPUTE});
  };
  EXPECT_EQ(series(5, 10).live, 1u);
  EXPECT_EQ(series(5, 10).creates, 1u);
  EXPECT_EQ(series(5, 0).creates, 1u) << "the folded one keeps its own";
  EXPECT_EQ(Total(m, 5).creates, 2u);

  m.Apply(Destroy(0xffff888100000001, 10, 5, 1, 1, GPUQ_QUEUE_COMPUTE));
  m.EraseCgroup(5);
  m.Apply(Create(0xffff888100000001, 10, 5, 1, 2));
  EXPECT_EQ(series(5, 10).creates, 1u);
  EXPECT_EQ(series(5, 10).live, 1u);
  EXPECT_EQ(m.Series().queue_series.count({5, 0, 1, GPUQ_QUEUE_COMPUTE}), 0u);
}

// A queue keeps the series it counts in (Model::SeriesOf): one erased under
// it (EraseCgroup is public; retirement only erases idle containers') must
// be found again, not written through a stale memo.
TEST(RetireTest, AQueueWhoseSeriesWasErasedCountsInANewOne) {
  Model m;
  m.Apply(Create(0xffff888100000001, 10, 5, 1, 0));
  m.EraseCgroup(5);
  m.Apply(Destroy(0xffff888100000001, 10, 5, 1, 0, GPUQ_QUEUE_COMPUTE));
  ASSERT_EQ(m.Series().queue_series.count({5, 10, 1, GPUQ_QUEUE_COMPUTE}), 1u);
  EXPECT_EQ(Total(m, 5).live, 0u);
  EXPECT_EQ(Total(m, 5).destroys[GPUQ_DESTROY_IOCTL], 1u);
}

TEST(RetireTest, BusyOrRecentOwnersStay) {
  Model m;
  m.SetNow(1 * kSecond);
  m.Apply(Create(0xffff888100000001, 10, 5, 1, 0));  // still holds a queue
  m.Apply(Exit(0xffff888100000002, 11, 5));          // idle but recent
  m.SetNow(30 * kSecond);
  EXPECT_EQ(m.RetireIdleOwners(60 * kSecond), 0u);
  EXPECT_TRUE(m.IdleCgroups(60 * kSecond).empty());
}

TEST(RetireTest, GoneContainerIsRemovedHostOnlyFolds) {
  PipelineOptions options;
  options.use_sysfs = false;
  options.container_grace = std::chrono::milliseconds(0);
  Pipeline pipeline(options, nullptr);
  gpuq_event_header hdr{};
  hdr.cgroup_id = 7;
  pipeline.Handle(CgroupPathRecord{
      hdr,
      "/docker/"
      "0124dd351391c6c45121cf43714d956032a91aee4fa3fa9ed0cf6b58d62b9307"});
  hdr.cgroup_id = 8;
  pipeline.Handle(CgroupPathRecord{hdr, "/user.slice"});
  pipeline.Handle(Create(0xffff888100000001, 10, 7, 1, 0));
  pipeline.Handle(Destroy(0xffff888100000001, 10, 7, 1, 0, GPUQ_QUEUE_COMPUTE));
  pipeline.Handle(Create(0xffff888100000002, 20, 8, 1, 0));
  pipeline.Handle(Destroy(0xffff888100000002, 20, 8, 1, 0, GPUQ_QUEUE_COMPUTE));

  pipeline.RetireNow();
  const Snapshot s = pipeline.TakeSnapshot();
  bool container_series = false;
  QueueSeries host;
  for (const auto& [key, series] : s.queue_series) {
    container_series |= key.cgroup_id == 7;
    if (key.cgroup_id == 8) {
      EXPECT_EQ(key.tgid, 0u) << "host process folded";
      host.creates += series.creates;
    }
  }
  EXPECT_FALSE(container_series) << "the gone container's series are removed";
  EXPECT_EQ(host.creates, 1u) << "host totals survive";
}

// A replay's pipeline that admits one container and retires at once.
PipelineOptions OneContainerNoGrace() {
  PipelineOptions options;
  options.use_sysfs = false;
  options.max_containers = 1;
  options.container_grace = std::chrono::milliseconds(0);
  return options;
}

TEST(RetireTest, RemovalFreesACapSlot) {
  Pipeline pipeline(OneContainerNoGrace(), nullptr);
  const std::string a(64, 'a'), b(64, 'b'), c(64, 'c');
  gpuq_event_header hdr{};
  uint64_t cgroup = 100;
  for (const std::string& id : {a, b, c}) {
    hdr.cgroup_id = cgroup++;
    pipeline.Handle(CgroupPathRecord{hdr, "/docker/" + id});
  }
  pipeline.Handle(Create(0xffff888100000001, 10, 100, 1, 0));  // a: own series
  pipeline.Handle(Create(0xffff888100000002, 11, 101, 1, 0));  // b: folded
  EXPECT_EQ(pipeline.TakeSnapshot().containers_folded, 1u);
  pipeline.Handle(
      Destroy(0xffff888100000001, 10, 100, 1, 0, GPUQ_QUEUE_COMPUTE));
  pipeline.RetireNow();  // a is gone: its slot frees
  pipeline.Handle(Create(0xffff888100000003, 12, 102, 1, 0));  // c: admitted
  const Snapshot s = pipeline.TakeSnapshot();
  EXPECT_EQ(s.labels.at(102).container, c.substr(0, 12));
  EXPECT_EQ(s.labels.at(101).container, kFoldedContainer) << "b stays folded";
}

// Admission is settled once per cgroup, then skipped per event: a retired
// container is admitted again at its next event (under the cap as it is
// then), and a path learned later for a cgroup admits the container it names.
TEST(RetireTest, AContainerRetiredOrRenamedIsAdmittedAgain) {
  Pipeline pipeline(OneContainerNoGrace(), nullptr);
  const std::string a(64, 'a'), b(64, 'b'), c(64, 'c');
  gpuq_event_header hdr{};
  hdr.cgroup_id = 100;
  pipeline.Handle(CgroupPathRecord{hdr, "/docker/" + a});
  hdr.cgroup_id = 101;
  pipeline.Handle(CgroupPathRecord{hdr, "/docker/" + b});
  pipeline.Handle(Create(0xffff888100000001, 10, 100, 1, 0));  // a admitted
  pipeline.Handle(
      Destroy(0xffff888100000001, 10, 100, 1, 0, GPUQ_QUEUE_COMPUTE));
  pipeline.RetireNow();                                        // a is gone
  pipeline.Handle(Create(0xffff888100000002, 11, 101, 1, 0));  // b admitted
  pipeline.Handle(Create(0xffff888100000003, 12, 100, 1, 0));  // a: cap full
  Snapshot s = pipeline.TakeSnapshot();
  EXPECT_EQ(s.labels.at(101).container, b.substr(0, 12));
  EXPECT_EQ(s.labels.at(100).container, kFoldedContainer);
  EXPECT_EQ(s.containers_folded, 1u);

  // cgroup 101 now names c: c is admitted (folded: the cap holds b).
  hdr.cgroup_id = 101;
  pipeline.Handle(CgroupPathRecord{hdr, "/docker/" + c});
  pipeline.Handle(Create(0xffff888100000002, 11, 101, 1, 1));
  s = pipeline.TakeSnapshot();
  EXPECT_EQ(s.labels.at(101).container, kFoldedContainer);
  EXPECT_EQ(s.containers_folded, 2u);
}

}  // namespace
}  // namespace gpuq
