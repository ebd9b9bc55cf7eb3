// CgroupResolver on directory trees shaped like cgroup2 mounts, built at test
// time so inode numbers are real, plus one check on this machine's hierarchy.
#include "resolver/cgroup_resolver.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "common/host_paths.h"
#include "test_support.h"

// Its own namespace: the unit tests build as one unity translation unit per
// batch (tests/CMakeLists.txt), where its constants met another file's.
namespace gpuq::cgroup_resolver_test {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

const std::string kDockerScope =
    "/system.slice/docker-"
    "a0cb2eed86e5dff4c412f57691b8e384d409f005189b6fd377a69e775fa19b69.scope";

struct FakeClock {
  std::chrono::steady_clock::time_point now{std::chrono::seconds(1000)};
  CgroupResolver::Clock AsClock() {
    return [this] { return now; };
  }
};

// A cgroup2 root at `root`: the marker file plus a few interface files and a
// systemd-like layout below it.
void MakeV2Tree(const std::string& root) {
  fs::create_directories(root + "/init.scope");
  fs::create_directories(root + "/system.slice/sshd.service");
  fs::create_directories(root + kDockerScope + "/init.scope");
  WriteFile(root + "/cgroup.controllers", "\n");
  WriteFile(root + "/cgroup.procs", "\n");
  WriteFile(root + "/system.slice/cgroup.procs", "\n");
}

class CgroupResolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tmp_.path().empty()) << "mkdtemp failed";
    mount_ = tmp_.path() + "/fs/cgroup";
    MakeV2Tree(mount_);
  }

  CgroupResolver MakeResolver(milliseconds interval = milliseconds(1000)) {
    return CgroupResolver(mount_, interval, clock_.AsClock());
  }

  TempDir tmp_;
  std::string mount_;
  FakeClock clock_;
};

TEST_F(CgroupResolverTest, FindsUnifiedRoot) {
  CgroupResolver resolver = MakeResolver();
  EXPECT_EQ(resolver.V2Root(), mount_);
}

TEST_F(CgroupResolverTest, TrailingSlashInMountIsIgnored) {
  CgroupResolver resolver(mount_ + "/", milliseconds(1000), clock_.AsClock());
  EXPECT_EQ(resolver.V2Root(), mount_);
}

TEST_F(CgroupResolverTest, ResolvesRootAndNestedCgroups) {
  CgroupResolver resolver = MakeResolver();
  EXPECT_EQ(resolver.PathOf(InodeOf(mount_)), "/");
  EXPECT_EQ(resolver.PathOf(InodeOf(mount_ + "/system.slice/sshd.service")),
            "/system.slice/sshd.service");
  EXPECT_EQ(resolver.PathOf(InodeOf(mount_ + kDockerScope)), kDockerScope);
  EXPECT_EQ(resolver.PathOf(InodeOf(mount_ + kDockerScope + "/init.scope")),
            kDockerScope + "/init.scope");
  EXPECT_EQ(resolver.PathOf(InodeOf(mount_ + "/init.scope")), "/init.scope");
}

TEST_F(CgroupResolverTest, FilesAreNotCgroups) {
  CgroupResolver resolver = MakeResolver();
  EXPECT_EQ(resolver.PathOf(InodeOf(mount_ + "/cgroup.procs")), std::nullopt);
}

TEST_F(CgroupResolverTest, FirstMissScansOnceThenHitsAreCached) {
  CgroupResolver resolver = MakeResolver();
  EXPECT_EQ(resolver.Rescans(), 0u);  // lazy: nothing before the first miss
  const uint64_t sshd = InodeOf(mount_ + "/system.slice/sshd.service");
  ASSERT_TRUE(resolver.PathOf(sshd).has_value());
  EXPECT_EQ(resolver.Rescans(), 1u);
  clock_.now += std::chrono::hours(1);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(resolver.PathOf(sshd).has_value());
  EXPECT_EQ(resolver.PathOf(InodeOf(mount_)), "/");
  EXPECT_EQ(resolver.Rescans(), 1u);
}

TEST_F(CgroupResolverTest, NegativeCacheSuppressesRescanWithinInterval) {
  CgroupResolver resolver = MakeResolver(milliseconds(1000));
  const uint64_t bogus = 0xdeadbeefcafeULL;
  EXPECT_EQ(resolver.PathOf(bogus), std::nullopt);
  EXPECT_EQ(resolver.Rescans(), 1u);
  EXPECT_EQ(resolver.PathOf(bogus), std::nullopt);
  EXPECT_EQ(resolver.Rescans(), 1u);
  clock_.now += milliseconds(999);
  EXPECT_EQ(resolver.PathOf(bogus), std::nullopt);
  EXPECT_EQ(resolver.PathOf(bogus + 1), std::nullopt);  // any miss waits
  EXPECT_EQ(resolver.Rescans(), 1u);
  clock_.now += milliseconds(1);
  EXPECT_EQ(resolver.PathOf(bogus), std::nullopt);
  EXPECT_EQ(resolver.Rescans(), 2u);
}

TEST_F(CgroupResolverTest, RescanAfterIntervalFindsNewCgroup) {
  CgroupResolver resolver = MakeResolver(milliseconds(1000));
  ASSERT_EQ(resolver.PathOf(InodeOf(mount_)), "/");
  ASSERT_EQ(resolver.Rescans(), 1u);

  const std::string created = "/kubepods.slice/kubepods-besteffort.slice";
  fs::create_directories(mount_ + created);
  const uint64_t id = InodeOf(mount_ + created);
  EXPECT_EQ(resolver.PathOf(id), std::nullopt);  // rate-limited
  EXPECT_EQ(resolver.Rescans(), 1u);

  clock_.now += milliseconds(1000);
  EXPECT_EQ(resolver.PathOf(id), created);
  EXPECT_EQ(resolver.Rescans(), 2u);
  // The parent, created with it, came along in the same walk.
  EXPECT_EQ(resolver.PathOf(InodeOf(mount_ + "/kubepods.slice")),
            "/kubepods.slice");
  EXPECT_EQ(resolver.Rescans(), 2u);
}

TEST_F(CgroupResolverTest, RemovedCgroupStaysResolvable) {
  CgroupResolver resolver = MakeResolver();
  const std::string dir = mount_ + kDockerScope + "/init.scope";
  const uint64_t id = InodeOf(dir);
  ASSERT_EQ(resolver.PathOf(id), kDockerScope + "/init.scope");
  ASSERT_TRUE(fs::remove(dir));

  clock_.now += std::chrono::seconds(10);
  EXPECT_EQ(resolver.PathOf(0xdeadbeefULL), std::nullopt);  // forces a walk
  EXPECT_EQ(resolver.Rescans(), 2u);
  EXPECT_EQ(resolver.PathOf(id), kDockerScope + "/init.scope");
}

TEST_F(CgroupResolverTest, LearnedPathTakesPrecedence) {
  CgroupResolver resolver = MakeResolver();
  const uint64_t sshd = InodeOf(mount_ + "/system.slice/sshd.service");
  resolver.Learn(sshd, "/from/capture");
  EXPECT_EQ(resolver.PathOf(sshd), "/from/capture");
  EXPECT_EQ(resolver.Rescans(), 0u);
  // A later walk does not overwrite it.
  EXPECT_EQ(resolver.PathOf(0xdeadbeefULL), std::nullopt);
  EXPECT_EQ(resolver.Rescans(), 1u);
  EXPECT_EQ(resolver.PathOf(sshd), "/from/capture");
}

TEST_F(CgroupResolverTest, LearnOverridesScannedPath) {
  CgroupResolver resolver = MakeResolver();
  const uint64_t root = InodeOf(mount_);
  ASSERT_EQ(resolver.PathOf(root), "/");
  resolver.Learn(root, "/learned");
  EXPECT_EQ(resolver.PathOf(root), "/learned");
}

TEST_F(CgroupResolverTest, LearnedIdMissingFromTreeResolves) {
  CgroupResolver resolver = MakeResolver();
  resolver.Learn(42, "/docker/x");
  EXPECT_EQ(resolver.PathOf(42), "/docker/x");
  EXPECT_EQ(resolver.Rescans(), 0u);
}

TEST_F(CgroupResolverTest, SymlinksAreNotFollowed) {
  const std::string outside = tmp_.path() + "/outside/secret.slice";
  fs::create_directories(outside);
  fs::create_directory_symlink(tmp_.path() + "/outside",
                               mount_ + "/system.slice/link");
  CgroupResolver resolver = MakeResolver();
  EXPECT_EQ(resolver.PathOf(InodeOf(outside)), std::nullopt);
  EXPECT_EQ(resolver.PathOf(InodeOf(tmp_.path() + "/outside")), std::nullopt);
  EXPECT_EQ(resolver.PathOf(InodeOf(mount_ + "/init.scope")), "/init.scope");
}

TEST_F(CgroupResolverTest, DeepHierarchyIsWalked) {
  std::string relative;
  for (int i = 0; i < 40; ++i) relative += "/d" + std::to_string(i);
  fs::create_directories(mount_ + relative);
  CgroupResolver resolver = MakeResolver();
  EXPECT_EQ(resolver.PathOf(InodeOf(mount_ + relative)), relative);
}

TEST(CgroupResolverHybridTest, FindsUnifiedSubdirectory) {
  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  // Hybrid layout: tmpfs with v1 hierarchies and cgroup2 at `unified`.
  const std::string mount = tmp.path() + "/fs/cgroup";
  for (const char* v1 : {"cpu,cpuacct", "memory", "pids", "systemd"}) {
    fs::create_directories(mount + "/" + v1 + "/system.slice");
  }
  const std::string unified = mount + "/unified";
  MakeV2Tree(unified);
  FakeClock clock;
  CgroupResolver resolver(mount, milliseconds(1000), clock.AsClock());
  EXPECT_EQ(resolver.V2Root(), unified);
  EXPECT_EQ(resolver.PathOf(InodeOf(unified)), "/");
  EXPECT_EQ(resolver.PathOf(InodeOf(unified + kDockerScope)), kDockerScope);
  // v1 directories are not v2 cgroups.
  EXPECT_EQ(resolver.PathOf(InodeOf(mount + "/memory/system.slice")),
            std::nullopt);
}

TEST(CgroupResolverHybridTest, UnifiedRootPreferredOverUnifiedSubdirectory) {
  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  const std::string mount = tmp.path() + "/cgroup";
  MakeV2Tree(mount);
  MakeV2Tree(mount + "/unified");  // a v2 cgroup that happens to be named so
  FakeClock clock;
  CgroupResolver resolver(mount, milliseconds(1000), clock.AsClock());
  EXPECT_EQ(resolver.V2Root(), mount);
  EXPECT_EQ(resolver.PathOf(InodeOf(mount + "/unified/init.scope")),
            "/unified/init.scope");
}

TEST(CgroupResolverNoV2Test, LegacyV1OnlyHasNoRoot) {
  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  const std::string mount = tmp.path() + "/cgroup";
  for (const char* v1 : {"cpu,cpuacct", "memory", "systemd"}) {
    fs::create_directories(mount + "/" + v1 + "/docker");
    WriteFile(mount + "/" + v1 + "/cgroup.procs", "\n");
  }
  FakeClock clock;
  CgroupResolver resolver(mount, milliseconds(1000), clock.AsClock());
  EXPECT_EQ(resolver.V2Root(), "");
  EXPECT_EQ(resolver.PathOf(InodeOf(mount)), std::nullopt);
  EXPECT_EQ(resolver.PathOf(InodeOf(mount + "/memory/docker")), std::nullopt);
  EXPECT_EQ(resolver.Rescans(), 0u);
  // Learned mappings still work without a hierarchy (replaying a capture).
  resolver.Learn(7, "/docker/x");
  EXPECT_EQ(resolver.PathOf(7), "/docker/x");
}

TEST(CgroupResolverNoV2Test, MissingMountHasNoRoot) {
  FakeClock clock;
  CgroupResolver resolver("/nonexistent/gpuq/fs/cgroup", milliseconds(1000),
                          clock.AsClock());
  EXPECT_EQ(resolver.V2Root(), "");
  EXPECT_EQ(resolver.PathOf(1), std::nullopt);
}

TEST(CgroupResolverNoV2Test, RootRemovedAfterConstructionDoesNotCrash) {
  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  const std::string mount = tmp.path() + "/cgroup";
  MakeV2Tree(mount);
  FakeClock clock;
  CgroupResolver resolver(mount, milliseconds(1000), clock.AsClock());
  ASSERT_EQ(resolver.V2Root(), mount);
  fs::remove_all(mount);
  EXPECT_EQ(resolver.PathOf(1), std::nullopt);
  EXPECT_EQ(resolver.Rescans(), 1u);
}

// The real hierarchy: the id of this process's cgroup resolves back to the
// path /proc/self/cgroup reports.
TEST(CgroupResolverRealTest, ResolvesOwnCgroup) {
  const HostPaths host;
  std::ifstream proc(host.procfs + "/self/cgroup");
  if (!proc) GTEST_SKIP() << "no " << host.procfs << "/self/cgroup";
  std::string line;
  std::optional<std::string> own_path;
  while (std::getline(proc, line)) {
    if (line.rfind("0::", 0) == 0) own_path = line.substr(3);
  }
  if (!own_path) {
    GTEST_SKIP() << "no cgroup v2 (`0::`) line in /proc/self/cgroup: "
                    "legacy v1-only host";
  }
  CgroupResolver resolver(host.CgroupMount());
  if (resolver.V2Root().empty()) {
    GTEST_SKIP() << "no cgroup.controllers in " << host.CgroupMount()
                 << " or its unified/: no cgroup2 mount";
  }
  const std::string dir =
      resolver.V2Root() + (*own_path == "/" ? "" : *own_path);
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    GTEST_SKIP() << dir
                 << " not visible (cgroup namespace differs from the "
                    "mount's?)";
  }
  EXPECT_EQ(resolver.PathOf(st.st_ino), *own_path)
      << "v2 root " << resolver.V2Root() << ", inode " << st.st_ino;
  EXPECT_EQ(resolver.Rescans(), 1u);
}

}  // namespace
}  // namespace gpuq::cgroup_resolver_test
