// Seeding from KFD sysfs at start (Pipeline::Start): the type a queue shows
// is the running kernel's kfd_queue_type, converted by the numbering the
// pipeline is given (loader/kfd_queue_types.h), and a secondary context's
// queues are not seeded (Model::Diff says why).
#include <gpuq/abi.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "loader/kfd_queue_types.h"
#include "model/pipeline.h"
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

}  // namespace
}  // namespace gpuq
