// Attributor on cgroup trees built from tests/fixtures/cgroup/*.dirs: host vs
// container vs unresolved, pinning, and the unresolved counter.
#include "resolver/attributor.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "resolver/cgroup_resolver.h"
#include "test_support.h"

#ifndef GPUQ_SOURCE_DIR
#error "GPUQ_SOURCE_DIR must name the repository root"
#endif

namespace gpuq {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

const std::string kFixtureDir =
    std::string(GPUQ_SOURCE_DIR) + "/tests/fixtures/cgroup";

const std::string kDockerScope =
    "/system.slice/"
    "docker-7b354f6978341a10c1d9fb3a2e9a7d7c5ebac39ca25b56da461315422bd6c6a1."
    "scope";
const std::string kPodSlice =
    "/kubepods.slice/kubepods-burstable.slice/"
    "kubepods-burstable-pod4180253f_7940_459d_bcbe_d79b604a7d60.slice";
const std::string kK8sContainerId =
    "7032bb6c083cfdbe222499858126ddf7328d6fe470818f1929556148705636cf";
const std::string kK8sScope =
    kPodSlice + "/cri-containerd-" + kK8sContainerId + ".scope";
const std::string kPodmanScope =
    "/user.slice/user-1000.slice/user@1000.service/user.slice/"
    "libpod-7fd6d8e30e74cb2a8474658a1ff6bf6e99241d8482cb31c657f1e2f4697c3fd6."
    "scope";

constexpr uint64_t kBogusId = 0xdeadbeefcafeULL;

// Creates every directory listed in `dirs_file` below `root`.
void BuildTree(const std::string& dirs_file, const std::string& root) {
  std::ifstream in(dirs_file);
  ASSERT_TRUE(in) << "missing fixture " << dirs_file;
  std::string line;
  int created = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    ASSERT_EQ(line[0], '/') << dirs_file << ": " << line;
    fs::create_directories(root + line);
    ++created;
  }
  ASSERT_GT(created, 0) << dirs_file;
}

// Builds unified_systemd.dirs under `tmp` as a cgroup2 mount; returns it.
std::string MakeUnifiedMount(const TempDir& tmp) {
  const std::string mount = tmp.path() + "/fs/cgroup";
  if (tmp.path().empty()) return mount;
  BuildTree(kFixtureDir + "/unified_systemd.dirs", mount);
  WriteFile(mount + "/cgroup.controllers", "cpu memory pids\n");
  return mount;
}

class AttributorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty()) << "mkdtemp failed";
    ASSERT_EQ(resolver_.V2Root(), v2_root_);
  }

  uint64_t IdOf(const std::string& relative) {
    return InodeOf(v2_root_ + relative);
  }

  // Declaration order matters: the tree exists before the resolver looks.
  TempDir tmp_;
  std::string v2_root_ = MakeUnifiedMount(tmp_);
  std::chrono::steady_clock::time_point now_{std::chrono::seconds(1000)};
  CgroupResolver resolver_{v2_root_, milliseconds(1000),
                           [this] { return now_; }};
  Attributor attributor_{&resolver_};
};

TEST_F(AttributorTest, HostCgroupHasEmptyContainerLabel) {
  const Attribution& a =
      attributor_.Attribute(IdOf("/system.slice/sshd.service"));
  EXPECT_TRUE(a.resolved);
  EXPECT_EQ(a.container, "");
  EXPECT_EQ(a.cgroup_path, "/system.slice/sshd.service");
  EXPECT_FALSE(a.identity.InContainer());
  EXPECT_EQ(attributor_.UnresolvedTotal(), 0u);
}

TEST_F(AttributorTest, RootCgroupIsHost) {
  const Attribution& a = attributor_.Attribute(IdOf(""));
  EXPECT_TRUE(a.resolved);
  EXPECT_EQ(a.container, "");
  EXPECT_EQ(a.cgroup_path, "/");
}

TEST_F(AttributorTest, DockerContainerGetsShortId) {
  const Attribution& a = attributor_.Attribute(IdOf(kDockerScope));
  EXPECT_TRUE(a.resolved);
  EXPECT_EQ(a.container, "7b354f697834");
  EXPECT_EQ(a.identity.runtime, "docker");
  EXPECT_EQ(a.cgroup_path, kDockerScope);
}

TEST_F(AttributorTest, NestedCgroupGetsItsContainer) {
  const Attribution& a =
      attributor_.Attribute(IdOf(kDockerScope + "/init.scope"));
  EXPECT_EQ(a.container, "7b354f697834");
}

TEST_F(AttributorTest, KubernetesContainerCarriesPodUid) {
  const Attribution& a = attributor_.Attribute(IdOf(kK8sScope));
  EXPECT_TRUE(a.resolved);
  EXPECT_EQ(a.container, kK8sContainerId.substr(0, 12));
  EXPECT_EQ(a.identity.container_id, kK8sContainerId);
  EXPECT_EQ(a.identity.runtime, "containerd");
  EXPECT_EQ(a.identity.pod_uid, "4180253f-7940-459d-bcbe-d79b604a7d60");
  // Pod names and namespaces come later: the labels stay empty.
}

TEST_F(AttributorTest, PodSliceIsNotAContainer) {
  const Attribution& a = attributor_.Attribute(IdOf(kPodSlice));
  EXPECT_TRUE(a.resolved);
  EXPECT_EQ(a.container, "");
  EXPECT_EQ(a.identity.pod_uid, "4180253f-7940-459d-bcbe-d79b604a7d60");
}

TEST_F(AttributorTest, PodmanConmonIsHostAndPayloadIsContainer) {
  const std::string conmon =
      "/user.slice/user-1000.slice/user@1000.service/user.slice/"
      "libpod-conmon-"
      "7fd6d8e30e74cb2a8474658a1ff6bf6e99241d8482cb31c657f1e2f4697c3fd6.scope";
  EXPECT_EQ(attributor_.Attribute(IdOf(conmon)).container, "");
  EXPECT_EQ(attributor_.Attribute(IdOf(kPodmanScope + "/container")).container,
            "7fd6d8e30e74");
  EXPECT_EQ(resolver_.Rescans(), 1u);
}

TEST_F(AttributorTest, UnknownIdIsUnresolved) {
  const Attribution& a = attributor_.Attribute(kBogusId);
  EXPECT_FALSE(a.resolved);
  EXPECT_EQ(a.container, kUnresolvedContainer);
  EXPECT_EQ(a.cgroup_path, "");
  EXPECT_EQ(attributor_.UnresolvedTotal(), 1u);
}

TEST_F(AttributorTest, UnresolvedCountedOncePerId) {
  for (int i = 0; i < 5; ++i) {
    attributor_.Attribute(kBogusId);
    now_ += std::chrono::seconds(2);  // every retry may rescan
  }
  EXPECT_EQ(attributor_.UnresolvedTotal(), 1u);
  EXPECT_GE(resolver_.Rescans(), 5u);  // unresolved ids are retried
  attributor_.Attribute(kBogusId + 1);
  attributor_.Attribute(kBogusId + 2);
  attributor_.Attribute(kBogusId + 1);
  EXPECT_EQ(attributor_.UnresolvedTotal(), 3u);
  // Resolved ids never count.
  attributor_.Attribute(IdOf(kDockerScope));
  EXPECT_EQ(attributor_.UnresolvedTotal(), 3u);
}

TEST_F(AttributorTest, PinnedAfterCgroupRemoval) {
  const std::string dir = v2_root_ + kK8sScope;
  const uint64_t id = InodeOf(dir);
  const Attribution first = attributor_.Attribute(id);
  ASSERT_TRUE(first.resolved);
  ASSERT_TRUE(fs::remove(dir));

  now_ += std::chrono::seconds(10);
  attributor_.Attribute(kBogusId);  // a later walk without the directory
  const uint64_t rescans = resolver_.Rescans();
  const Attribution& again = attributor_.Attribute(id);
  EXPECT_TRUE(again.resolved);
  EXPECT_EQ(again.container, first.container);
  EXPECT_EQ(again.cgroup_path, kK8sScope);
  EXPECT_EQ(resolver_.Rescans(), rescans);  // pinned: no resolver work
}

TEST_F(AttributorTest, UnresolvedThenResolvedIsPinned) {
  // A first walk, then a container cgroup created right after it: its first
  // lookup falls inside the rescan interval and fails.
  ASSERT_TRUE(attributor_.Attribute(IdOf(kDockerScope)).resolved);
  const std::string created =
      kPodSlice +
      "/cri-containerd-"
      "bedaada47b575e45e2bdb7346fac511e110979a2c9b7f9c6a587c678769e91a5.scope/"
      "sub";
  fs::create_directories(v2_root_ + created);
  const uint64_t id = IdOf(created);
  const Attribution& early = attributor_.Attribute(id);
  EXPECT_FALSE(early.resolved);
  EXPECT_EQ(early.container, kUnresolvedContainer);
  EXPECT_EQ(attributor_.UnresolvedTotal(), 1u);

  now_ += milliseconds(1000);
  const Attribution& later = attributor_.Attribute(id);
  EXPECT_TRUE(later.resolved);
  EXPECT_EQ(later.container, "bedaada47b57");
  EXPECT_EQ(later.cgroup_path, created);
  EXPECT_EQ(&later, &early);  // replaced in place
  EXPECT_EQ(attributor_.UnresolvedTotal(), 1u);

  ASSERT_TRUE(fs::remove(v2_root_ + created));
  now_ += std::chrono::seconds(10);
  attributor_.Attribute(kBogusId);
  EXPECT_EQ(attributor_.Attribute(id).container, "bedaada47b57");
  EXPECT_EQ(attributor_.UnresolvedTotal(), 2u);  // only kBogusId added
}

TEST_F(AttributorTest, LearnPinsWithoutResolving) {
  const std::string path =
      "/docker/"
      "30ee8d214faef7efb902eb6ef4e1ee5dfcf82207b74b3b10e775f928c4909a9b";
  attributor_.Learn(kBogusId, path);
  const Attribution& a = attributor_.Attribute(kBogusId);
  EXPECT_TRUE(a.resolved);
  EXPECT_EQ(a.container, "30ee8d214fae");
  EXPECT_EQ(a.cgroup_path, path);
  EXPECT_EQ(attributor_.UnresolvedTotal(), 0u);
  EXPECT_EQ(resolver_.Rescans(), 0u);
  EXPECT_EQ(resolver_.PathOf(kBogusId), path);
}

TEST_F(AttributorTest, LearnReplacesUnresolved) {
  EXPECT_FALSE(attributor_.Attribute(kBogusId).resolved);
  attributor_.Learn(kBogusId, kDockerScope);
  EXPECT_EQ(attributor_.Attribute(kBogusId).container, "7b354f697834");
  EXPECT_EQ(attributor_.UnresolvedTotal(), 1u);
}

TEST(AttributorHybridTest, CgroupfsRuntimesOnHybridHost) {
  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  const std::string mount = tmp.path() + "/fs/cgroup";
  for (const char* v1 : {"cpu,cpuacct", "memory", "systemd"}) {
    fs::create_directories(mount + "/" + v1 + "/docker");
  }
  const std::string unified = mount + "/unified";
  BuildTree(kFixtureDir + "/hybrid_cgroupfs.dirs", unified);
  WriteFile(unified + "/cgroup.controllers", "\n");
  auto now = std::chrono::steady_clock::time_point(std::chrono::seconds(1));
  CgroupResolver resolver(mount, milliseconds(1000), [&now] { return now; });
  ASSERT_EQ(resolver.V2Root(), unified);
  Attributor attributor(&resolver);

  struct Case {
    std::string path;
    std::string container;
    std::string runtime;
    std::string pod_uid;
  };
  const std::vector<Case> cases = {
      {"/docker/"
       "30ee8d214faef7efb902eb6ef4e1ee5dfcf82207b74b3b10e775f928c4909a9b",
       "30ee8d214fae", "docker", ""},
      {"/kubepods/burstable/pod2aa4d1ab-4abd-4ad6-9183-765ebb4802cc/"
       "d1dec059e49b852949daeacc9437cfbd847815c9af8f4498148b7e31a39e2296",
       "d1dec059e49b", "containerd", "2aa4d1ab-4abd-4ad6-9183-765ebb4802cc"},
      {"/kubepods/besteffort/podd4c5a26fc6786aa3b0650a1762796785/"
       "crio-e6e5818a84ed14b4a7b3974ebfe6b9eed785a5dfc4e0d95e819303e5e2430299",
       "e6e5818a84ed", "cri-o", "d4c5a26fc6786aa3b0650a1762796785"},
      {"/kubepods/besteffort/podd4c5a26fc6786aa3b0650a1762796785/"
       "crio-conmon-"
       "e6e5818a84ed14b4a7b3974ebfe6b9eed785a5dfc4e0d95e819303e5e2430299",
       "", "", "d4c5a26fc6786aa3b0650a1762796785"},
      {"/default/"
       "a0cb2eed86e5dff4c412f57691b8e384d409f005189b6fd377a69e775fa19b69",
       "a0cb2eed86e5", "containerd", ""},
      {"/system.slice/dockerd.service", "", "", ""},
      {"/kubepods/burstable", "", "", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.path);
    const Attribution& a = attributor.Attribute(InodeOf(unified + c.path));
    EXPECT_TRUE(a.resolved);
    EXPECT_EQ(a.container, c.container);
    EXPECT_EQ(a.identity.runtime, c.runtime);
    EXPECT_EQ(a.identity.pod_uid, c.pod_uid);
    EXPECT_EQ(a.cgroup_path, c.path);
  }
  EXPECT_EQ(resolver.Rescans(), 1u);
  EXPECT_EQ(attributor.UnresolvedTotal(), 0u);
  // v1 hierarchy directories are not v2 ids.
  EXPECT_EQ(attributor.Attribute(InodeOf(mount + "/memory/docker")).container,
            kUnresolvedContainer);
}

}  // namespace
}  // namespace gpuq
