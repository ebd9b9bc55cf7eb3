// Paths learned at cgroup creation (LearnedCgroups): only containers, kept for
// the retention after removal, bounded with counted evictions; and the
// resolver answering from them once the directory is gone.
#include "resolver/learned_cgroups.h"

#include <gpuq/cgroup_watch.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>

#include "resolver/cgroup_resolver.h"
#include "test_support.h"

namespace gpuq {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using Clock = LearnedCgroups::Clock;

// podman with the cgroupfs driver, as on this project's hosts.
const std::string kPodman =
    "/libpod_parent/"
    "libpod-973ff22548d3573f2f654f6cb813f9bb6d6d7036767dffcf3d76eeb3de507d87";
std::string Docker(int i) {
  const std::string hex = "a0cb2eed86e5dff4c412f57691b8e384d409f005189b6fd3";
  char tail[17];
  std::snprintf(tail, sizeof(tail), "%016x", i);
  return "/system.slice/docker-" + hex + tail + ".scope";
}

const Clock::time_point kT0{std::chrono::seconds(1000)};

TEST(LearnedCgroupsTest, KeepsContainersIgnoresHostCgroups) {
  LearnedCgroups learned(milliseconds(1000), 10);
  learned.Created(7, kPodman, kT0);
  learned.Created(8, "/system.slice/cron.service", kT0);
  learned.Created(9, "/user.slice/user-0.slice/session-3.scope", kT0);
  EXPECT_EQ(learned.Find(7), kPodman);
  EXPECT_EQ(learned.Find(8), std::nullopt);
  EXPECT_EQ(learned.Find(9), std::nullopt);
  const LearnedCgroupStats s = learned.Stats();
  EXPECT_EQ(s.remembered, 1u);
  EXPECT_EQ(s.learned, 1u);
  EXPECT_EQ(s.ignored, 2u);
}

TEST(LearnedCgroupsTest, NestedCgroupsOfAContainerAreKept) {
  LearnedCgroups learned(milliseconds(1000), 10);
  learned.Created(7, kPodman + "/init.scope", kT0);
  EXPECT_EQ(learned.Find(7), kPodman + "/init.scope");
}

TEST(LearnedCgroupsTest, RemovedPathStaysForTheRetentionThenExpires) {
  LearnedCgroups learned(milliseconds(1000), 10);
  learned.Created(7, kPodman, kT0);
  learned.Expire(kT0 + std::chrono::hours(1));  // alive: never expires
  ASSERT_EQ(learned.Find(7), kPodman);

  const auto removed = kT0 + std::chrono::hours(1);
  learned.Removed(7, removed);
  learned.Expire(removed + milliseconds(999));
  EXPECT_EQ(learned.Find(7), kPodman);              // the grace period
  learned.Removed(7, removed + milliseconds(500));  // a 2nd rmdir: no reset
  learned.Expire(removed + milliseconds(1000));
  EXPECT_EQ(learned.Find(7), std::nullopt);
  EXPECT_EQ(learned.Stats().expired, 1u);
  EXPECT_EQ(learned.Stats().remembered, 0u);
}

TEST(LearnedCgroupsTest, BoundedOldestEvictedAndCounted) {
  LearnedCgroups learned(milliseconds(1000), 3);
  for (int i = 0; i < 5; ++i) learned.Created(100 + i, Docker(i), kT0);
  EXPECT_EQ(learned.Find(100), std::nullopt);
  EXPECT_EQ(learned.Find(101), std::nullopt);
  for (int i = 2; i < 5; ++i) EXPECT_EQ(learned.Find(100 + i), Docker(i));
  const LearnedCgroupStats s = learned.Stats();
  EXPECT_EQ(s.remembered, 3u);
  EXPECT_EQ(s.evicted, 2u);
  EXPECT_EQ(s.learned, 5u);
}

TEST(LearnedCgroupsTest, ManyHostCgroupsCostNothing) {
  LearnedCgroups learned(milliseconds(1000), 3);
  learned.Created(7, kPodman, kT0);
  for (uint64_t i = 0; i < 10000; ++i) {
    learned.Created(1000 + i, "/system.slice/run-u" + std::to_string(i), kT0);
  }
  EXPECT_EQ(learned.Find(7), kPodman);
  EXPECT_EQ(learned.Stats().remembered, 1u);
  EXPECT_EQ(learned.Stats().evicted, 0u);
}

TEST(LearnedCgroupsTest, LostIsTheKernelsCumulativeCount) {
  LearnedCgroups learned(milliseconds(1000), 3);
  learned.SetLost(4);
  learned.SetLost(6);
  EXPECT_EQ(learned.Stats().lost, 6u);
}

// The resolver on a cgroup2-shaped tree: an id whose directory is gone
// before the agent first sees it resolves through what was learned at mkdir.
class ResolverWithLearnedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty()) << "mkdtemp failed";
    mount_ = tmp_.path() + "/cgroup";
    fs::create_directories(mount_ + "/system.slice");
    WriteFile(mount_ + "/cgroup.controllers", "\n");
  }
  uint64_t MakeCgroup(const std::string& path) {
    fs::create_directories(mount_ + path);
    return InodeOf(mount_ + path);
  }
  TempDir tmp_;
  std::string mount_;
};

TEST_F(ResolverWithLearnedTest, RemovedContainerCgroupResolvesFromLearned) {
  LearnedCgroups learned(milliseconds(60000), 16);
  CgroupResolver resolver(mount_);
  resolver.SetLearned(&learned);
  const uint64_t id = MakeCgroup(kPodman);
  learned.Created(id, kPodman, Clock::now());
  fs::remove(mount_ + kPodman);
  learned.Removed(id, Clock::now());

  EXPECT_EQ(resolver.PathOf(id), kPodman);
  EXPECT_EQ(resolver.Rescans(), 0u);  // no walk needed
}

TEST_F(ResolverWithLearnedTest, WithoutLearnedARemovedCgroupIsUnresolved) {
  CgroupResolver resolver(mount_);
  const uint64_t id = MakeCgroup(kPodman);
  fs::remove(mount_ + kPodman);
  EXPECT_EQ(resolver.PathOf(id), std::nullopt);  // the defect this fixes
}

TEST_F(ResolverWithLearnedTest, AnsweredPathsStayWalkedOnesAreReplaced) {
  std::chrono::steady_clock::time_point now{std::chrono::seconds(1)};
  CgroupResolver resolver(mount_, milliseconds(1000), [&] { return now; });
  const uint64_t asked = MakeCgroup(Docker(1));
  const uint64_t never_asked = MakeCgroup("/system.slice/run-u1.service");
  ASSERT_EQ(resolver.PathOf(asked), Docker(1));  // walk 1 sees both
  fs::remove(mount_ + Docker(1));
  fs::remove(mount_ + "/system.slice/run-u1.service");
  now += milliseconds(1000);
  EXPECT_EQ(resolver.PathOf(0xdeadbeef), std::nullopt);  // walk 2
  EXPECT_EQ(resolver.Rescans(), 2u);
  EXPECT_EQ(resolver.PathOf(asked), Docker(1));  // pinned: answered before
  // Not kept from walk 1: a host creating many cgroups does not grow the
  // cache (containers are what LearnedCgroups remembers).
  EXPECT_EQ(resolver.PathOf(never_asked), std::nullopt);
}

}  // namespace
}  // namespace gpuq
