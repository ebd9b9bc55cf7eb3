// Attribution on a cgroup v1 host: every task is in the v2 root, so the
// kernel's cgroup id names no container and the pipeline reads the owner's
// v1 path from /proc/<pid>/cgroup instead. The host tree is built at test
// time, shaped like a v1 host's (a v2 mount with only its root, and
// /proc/<pid>/cgroup lines as Docker's cgroupfs driver writes them).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "event_builders.h"
#include "export/collector.h"
#include "metric_matchers.h"
#include "model/pipeline.h"
#include "test_support.h"

namespace gpuq {
namespace {

const std::string kContainerId =
    "5d2c8e9f0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5";

double QueuesOf(const std::vector<prometheus::MetricFamily>& families,
                const std::string& container) {
  return Sum(families, "gpuq_queues", {{"container", container}});
}

class V1AttributionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_.Write("sys/fs/cgroup/cgroup.controllers", "");
    // A containerised process and a host process, both in the v2 root.
    root_.Write("proc/700/cgroup", "12:memory:/docker/" + kContainerId +
                                       "\n1:name=systemd:/docker/" +
                                       kContainerId + "\n0::/\n");
    root_.Write("proc/800/cgroup", "12:memory:/\n1:name=systemd:/\n0::/\n");
    struct stat st {};
    ASSERT_EQ(stat(root_.File("sys/fs/cgroup").c_str(), &st), 0);
    v2_root_id_ = st.st_ino;
    options_.paths = HostPaths::FromHostRoot(root_.path());
  }

  TempDir root_;
  uint64_t v2_root_id_ = 0;
  PipelineOptions options_;
};

TEST_F(V1AttributionTest, ContainerFoundThroughTheV1Path) {
  Pipeline pipeline(options_, nullptr);
  pipeline.Handle(Create(0xffff888100000700, 700, v2_root_id_, 1, 0));
  pipeline.Handle(Create(0xffff888100000800, 800, v2_root_id_, 1, 0));
  const auto families = BuildFamilies(pipeline.TakeSnapshot());
  EXPECT_EQ(QueuesOf(families, kContainerId.substr(0, 12)), 1);
  EXPECT_EQ(QueuesOf(families, ""), 1) << "the host process stays host";
}

TEST_F(V1AttributionTest, TeardownAfterThePidIsGoneKeepsTheContainer) {
  Pipeline pipeline(options_, nullptr);
  pipeline.Handle(Create(0xffff888100000700, 700, v2_root_id_, 1, 0));
  // The process is reaped: /proc/700 is gone when the kworker frees queues.
  std::filesystem::remove_all(root_.File("proc/700"));
  pipeline.Handle(Exit(0xffff888100000700, 700, v2_root_id_));
  pipeline.Handle(Destroy(0xffff888100000700, 700, v2_root_id_, 1, 0,
                          GPUQ_QUEUE_COMPUTE, GPUQ_DESTROY_PROCESS_EXIT));
  const Snapshot s = pipeline.TakeSnapshot();
  const auto families = BuildFamilies(s);
  EXPECT_EQ(QueuesOf(families, kContainerId.substr(0, 12)), 0);
  const double exit_destroys = Sum(
      families, "gpuq_queue_destroys_total",
      {{"container", kContainerId.substr(0, 12)}, {"reason", "process_exit"}});
  EXPECT_EQ(exit_destroys, 1);
}

// A pid the kernel gives to a new process after the old one was reaped is
// a new owner: its KFD process (the event's process_key) tells them apart.
TEST_F(V1AttributionTest, APidReusedInAnotherContainerIsReattributed) {
  const std::string other =
      "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9";
  Pipeline pipeline(options_, nullptr);
  pipeline.Handle(Create(0xffff888100000700, 700, v2_root_id_, 1, 0));
  pipeline.Handle(Create(0xffff888100000700, 700, v2_root_id_, 1, 1));
  std::filesystem::remove_all(root_.File("proc/700"));
  pipeline.Handle(Exit(0xffff888100000700, 700, v2_root_id_));
  pipeline.Handle(Destroy(0xffff888100000700, 700, v2_root_id_, 1, 0,
                          GPUQ_QUEUE_COMPUTE, GPUQ_DESTROY_PROCESS_EXIT));
  // pid 700 again, now a process of another container.
  root_.Write("proc/700/cgroup", "12:memory:/docker/" + other +
                                     "\n1:name=systemd:/docker/" + other +
                                     "\n0::/\n");
  pipeline.Handle(Create(0xffff888100000900, 700, v2_root_id_, 1, 0));
  // The first process's teardown, late, still counts for its container.
  pipeline.Handle(Destroy(0xffff888100000700, 700, v2_root_id_, 1, 1,
                          GPUQ_QUEUE_COMPUTE, GPUQ_DESTROY_PROCESS_EXIT));
  const auto families = BuildFamilies(pipeline.TakeSnapshot());
  EXPECT_EQ(QueuesOf(families, other.substr(0, 12)), 1);
  EXPECT_EQ(QueuesOf(families, kContainerId.substr(0, 12)), 0);
  EXPECT_EQ(Sum(families, "gpuq_queue_destroys_total",
                {{"container", kContainerId.substr(0, 12)}}),
            2);
  EXPECT_EQ(Sum(families, "gpuq_queue_destroys_total",
                {{"container", other.substr(0, 12)}}),
            0);
}

// A process seeded from sysfs at start has no process key; its exit, under
// its KFD process's key once the pid is gone, still counts for it.
TEST_F(V1AttributionTest, ASeededProcessKeepsItsContainerPastItsPid) {
  Pipeline pipeline(options_, nullptr);
  pipeline.Handle(Create(0, 700, v2_root_id_, 1, 0));
  std::filesystem::remove_all(root_.File("proc/700"));
  pipeline.Handle(Exit(0xffff888100000700, 700, v2_root_id_));
  const auto families = BuildFamilies(pipeline.TakeSnapshot());
  EXPECT_EQ(Sum(families, "gpuq_process_exits_total",
                {{"container", kContainerId.substr(0, 12)}}),
            1);
}

TEST_F(V1AttributionTest, ReplayIsNeverReattributed) {
  // A capture's ids are already final: this host's /proc says nothing
  // about the processes in it.
  options_.use_sysfs = false;
  Pipeline pipeline(options_, nullptr);
  pipeline.Handle(Create(0xffff888100000700, 700, v2_root_id_, 1, 0));
  const auto families = BuildFamilies(pipeline.TakeSnapshot());
  EXPECT_EQ(QueuesOf(families, kContainerId.substr(0, 12)), 0);
}

}  // namespace
}  // namespace gpuq
