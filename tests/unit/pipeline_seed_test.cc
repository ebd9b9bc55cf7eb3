// Seeding from KFD sysfs at start (Pipeline::Start, model/sysfs_seed.h): the
// type a queue shows is the running kernel's kfd_queue_type, converted by the
// numbering the pipeline is given (loader/kfd_queue_types.h), a secondary
// context's queues are not seeded (Model::Diff says why), and a seeded
// queue's create record carries what sysfs and /proc say of its process.
#include <gpuq/abi.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <map>
#include <string>

#include "loader/kfd_queue_types.h"
#include "model/pipeline.h"
#include "model/sysfs_seed.h"
#include "test_support.h"

namespace gpuq {
namespace {

// proc/<pid>/<context dir>/queues/<qid>/{gpuid,type,size} under <root>/sys.
void WriteQueue(const TempDir& root, const std::string& context_dir, int qid,
                int type) {
  const std::string dir = "sys/class/kfd/kfd/proc/4321/" + context_dir +
                          "queues/" + std::to_string(qid) + "/";
  root.Write(dir + "gpuid", "5");
  root.Write(dir + "type", std::to_string(type));
  root.Write(dir + "size", "65536");
}

// Live queues per type after seeding the tree with `numbering`.
std::map<uint32_t, uint64_t> SeededTypes(const TempDir& root,
                                         const KfdQueueTypes& numbering) {
  PipelineOptions options;
  options.paths = HostPaths::FromHostRoot(root.path());
  options.queue_types = numbering;
  Pipeline pipeline(options, nullptr);
  pipeline.Start();
  std::map<uint32_t, uint64_t> live;
  for (const auto& [key, series] : pipeline.TakeSnapshot().queue_series) {
    live[key.queue_type] += series.live;
  }
  return live;
}

TEST(PipelineSeedTest, SysfsTypesFollowTheKernelsNumbering) {
  TempDir root;
  WriteQueue(root, "", 0, 0);
  WriteQueue(root, "", 1, 3);
  WriteQueue(root, "", 2, 4);
  // 7.2+: 3 is SDMA_XGMI and 4 SDMA_BY_ENG_ID.
  EXPECT_EQ(SeededTypes(root, KfdQueueTypesOfRelease("7.2.13")),
            (std::map<uint32_t, uint64_t>{{GPUQ_QUEUE_COMPUTE, 1},
                                          {GPUQ_QUEUE_SDMA_XGMI, 1},
                                          {GPUQ_QUEUE_SDMA_BY_ENG_ID, 1}}));
  // Up to 6.18: 3 is DIQ (a kernel queue sysfs never lists for a process,
  // so this only shows the mapping) and 4 SDMA_XGMI.
  EXPECT_EQ(SeededTypes(root, KfdQueueTypesOfRelease("6.18.15")),
            (std::map<uint32_t, uint64_t>{{GPUQ_QUEUE_COMPUTE, 1},
                                          {GPUQ_QUEUE_DIQ, 1},
                                          {GPUQ_QUEUE_SDMA_XGMI, 1}}));
}

TEST(PipelineSeedTest, SecondaryContextQueuesAreNotSeeded) {
  TempDir root;
  WriteQueue(root, "", 0, 0);
  WriteQueue(root, "context_1/", 0, 0);
  WriteQueue(root, "context_1/", 1, 0);
  EXPECT_EQ(SeededTypes(root, KfdQueueTypesOfRelease("7.3.4")),
            (std::map<uint32_t, uint64_t>{{GPUQ_QUEUE_COMPUTE, 1}}));
}

TEST(SysfsSeedTest, SeededCreateCarriesWhatSysfsAndProcSay) {
  TempDir root;
  WriteQueue(root, "", 7, 0);
  root.Write("proc/4321/cgroup", "0::/system.slice/docker-abc.scope\n");
  root.Write("proc/4321/comm", "python3\n");
  root.Write("sys/fs/cgroup/system.slice/docker-abc.scope/cgroup.procs", "");
  const HostPaths paths = HostPaths::FromHostRoot(root.path());
  const SysfsStart start = ReadSysfsStart(paths);
  ASSERT_EQ(start.queues.size(), 1u);
  // the tree has no topology: a warning, the queues still seeded
  ASSERT_EQ(start.warnings.size(), 1u);
  EXPECT_EQ(start.warnings[0].rfind("GPU topology unavailable: ", 0), 0u)
      << start.warnings[0];
  const SeededQueue s =
      SeedQueue(start.queues[0], paths, KfdQueueTypesOfRelease("7.3.4"),
                paths.CgroupMount());
  struct stat st {};
  ASSERT_EQ(
      ::stat((paths.CgroupMount() + "/system.slice/docker-abc.scope").c_str(),
             &st),
      0);
  EXPECT_EQ(s.event.hdr.type, GPUQ_EV_QUEUE_CREATE);
  EXPECT_EQ(s.event.hdr.tgid, 4321u);
  EXPECT_EQ(s.event.hdr.cgroup_id, static_cast<uint64_t>(st.st_ino));
  EXPECT_EQ(s.cgroup_path, "/system.slice/docker-abc.scope");
  EXPECT_EQ(s.event.gpu_id, 5u);
  EXPECT_EQ(s.event.queue_id, 7u);
  EXPECT_EQ(s.event.queue_type, GPUQ_QUEUE_COMPUTE);
  EXPECT_EQ(s.event.ring_size, 65536u);
  EXPECT_EQ(s.event.flags, GPUQ_CREATE_F_SEEDED);
  EXPECT_STREQ(s.event.comm, "python3");
}

TEST(SysfsSeedTest, NoKfdIsOneWarningNamingIt) {
  TempDir root;
  const SysfsStart start = ReadSysfsStart(HostPaths::FromHostRoot(root.path()));
  EXPECT_TRUE(start.gpus.empty());
  EXPECT_TRUE(start.queues.empty());
  ASSERT_EQ(start.warnings.size(), 1u);
  EXPECT_NE(start.warnings[0].find(root.path() + "/sys/class/kfd/kfd"),
            std::string::npos)
      << start.warnings[0];
}

}  // namespace
}  // namespace gpuq
