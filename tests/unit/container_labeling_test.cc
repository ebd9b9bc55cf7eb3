// ContainerLabeling: the per-container cap, the names a capture carries and
// the allowlisted runtime labels (no runtime: the metadata resolver's own
// tests cover asking one).
#include "model/container_labeling.h"

#include <gtest/gtest.h>

namespace gpuq {
namespace {

Attribution InContainer(const std::string& id) {
  Attribution a;
  a.identity.container_id = id;
  a.identity.runtime = "docker";
  a.container = a.identity.ShortId();
  a.resolved = true;
  return a;
}

TEST(ContainerLabelingTest, ContainersBeyondTheCapFoldUntilASlotFreesUp) {
  ContainerLabeling labeling(2, {}, nullptr);
  const Attribution a = InContainer("aaaaaaaaaaaa1111");
  const Attribution b = InContainer("bbbbbbbbbbbb2222");
  const Attribution c = InContainer("cccccccccccc3333");
  labeling.Admit(a);
  labeling.Admit(b);
  labeling.Admit(c);
  EXPECT_EQ(labeling.Labels(a, std::nullopt).container, "aaaaaaaaaaaa");
  EXPECT_EQ(labeling.Labels(c, std::nullopt).container, kFoldedContainer);
  EXPECT_EQ(labeling.Folded(), 1u);
  // A folded container stays folded for as long as it lives (pinned), even
  // once a slot frees up; the next new one gets the slot.
  labeling.Forget(a.identity.container_id);
  labeling.Admit(c);
  EXPECT_EQ(labeling.Labels(c, std::nullopt).container, kFoldedContainer);
  const Attribution d = InContainer("dddddddddddd4444");
  labeling.Admit(d);
  EXPECT_EQ(labeling.Labels(d, std::nullopt).container, "dddddddddddd");
  // Forgetting the folded one removes it from the count.
  labeling.Forget(c.identity.container_id);
  EXPECT_EQ(labeling.Folded(), 0u);
}

TEST(ContainerLabelingTest, CarriedNamesLabelTheSeries) {
  ContainerLabeling labeling(10, {"com.example/team", "tier"}, nullptr);
  const Attribution a = InContainer("aaaaaaaaaaaa1111");
  const Attribution k = InContainer("kkkkkkkkkkkk1111");
  labeling.Admit(a);
  labeling.Admit(k);
  EXPECT_FALSE(labeling.Metadata(a.identity).has_value());
  ContainerMetadata named;
  named.name = "vllm";
  named.labels = {{"tier", "gold"}, {"other", "x"}};
  labeling.Carry(a.identity.container_id, named);
  ContainerMetadata pod;
  pod.name = "k8s_worker_pod";
  pod.pod = "trainer-0";
  pod.ns = "ml";
  pod.k8s_container = "worker";
  labeling.Carry(k.identity.container_id, pod);

  const SeriesLabels la = labeling.Labels(a, labeling.Metadata(a.identity));
  EXPECT_EQ(la.container, "vllm");
  EXPECT_EQ(la.pod, "");
  ASSERT_EQ(la.extra.size(), 2u);
  EXPECT_EQ(la.extra[0], "");
  EXPECT_EQ(la.extra[1], "gold");
  // Kubernetes: the container name within its pod, and the pod's names.
  const SeriesLabels lk = labeling.Labels(k, labeling.Metadata(k.identity));
  EXPECT_EQ(lk.container, "worker");
  EXPECT_EQ(lk.pod, "trainer-0");
  EXPECT_EQ(lk.ns, "ml");
  EXPECT_EQ(labeling.ExtraLabelNames(),
            (std::vector<std::string>{"label_com_example_team", "label_tier"}));
}

TEST(ContainerLabelingTest, TheHostIsNeverAdmittedNorFolded) {
  ContainerLabeling labeling(0, {"tier"}, nullptr);
  Attribution host;
  host.resolved = true;
  labeling.Admit(host);
  const SeriesLabels l = labeling.Labels(host, std::nullopt);
  EXPECT_EQ(l.container, "");
  EXPECT_EQ(l.extra.size(), 1u);
  EXPECT_EQ(labeling.Folded(), 0u);
}

}  // namespace
}  // namespace gpuq
