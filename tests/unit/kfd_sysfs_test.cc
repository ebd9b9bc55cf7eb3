// Tests ReadKfdQueues and KfdPresent against the fixture tree
// (tests/fixtures/root) and against racy layouts built in a temporary
// directory.
#include "sources/kfd_sysfs.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "common/host_paths.h"
#include "test_support.h"

#ifndef GPUQ_FIXTURE_ROOT
#error "GPUQ_FIXTURE_ROOT must be the absolute path of tests/fixtures/root"
#endif

namespace gpuq::kfd_sysfs_test {
namespace {

// Writes proc/<pid>/queues/<qid>/{gpuid,type,size} as the kernel does: no
// trailing newline (kfd_procfs_queue_show()).
void WriteQueue(const TempDir& kfd, int pid, int qid, const std::string& gpuid,
                const std::string& type, const std::string& size) {
  const std::string dir =
      "proc/" + std::to_string(pid) + "/queues/" + std::to_string(qid) + "/";
  kfd.Write(dir + "gpuid", gpuid);
  kfd.Write(dir + "type", type);
  kfd.Write(dir + "size", size);
}

// (pid, queue_id, gpu_id, type, size), comparable and printable by gtest.
using QueueTuple = std::tuple<uint32_t, uint32_t, uint32_t, uint32_t, uint64_t>;

std::vector<QueueTuple> Tuples(const std::vector<SysfsQueue>& queues) {
  std::vector<QueueTuple> out;
  for (const SysfsQueue& q : queues) {
    out.emplace_back(q.pid, q.queue_id, q.gpu_id, q.type, q.size);
  }
  return out;
}

TEST(KfdSysfsTest, ReadsEveryQueueOfTheFixtureSorted) {
  std::vector<SysfsQueue> queues;
  std::string error;
  ASSERT_TRUE(ReadKfdQueues(FixtureKfd(), &queues, &error)) << error;
  EXPECT_EQ(error, "");
  // pid 987 sorts before 4242 numerically though "4242" < "987" as names.
  const std::vector<QueueTuple> want = {
      {987, 0, 52963, 0, 65536},
      {4242, 0, 45412, 0, 262144},
      {4242, 1, 45412, 1, 1048576},
      {4242, 2, 52963, 0, 262144},
  };
  EXPECT_EQ(Tuples(queues), want);
}

TEST(KfdSysfsTest, KfdPresent) {
  EXPECT_TRUE(KfdPresent(FixtureKfd()));
  EXPECT_FALSE(KfdPresent(std::string(GPUQ_FIXTURE_ROOT) + "/sys/class/nokfd"));
  EXPECT_FALSE(KfdPresent("/nonexistent/gpuq/kfd"));
  // A regular file in its place is not a loaded amdkfd.
  TempDir tmp;
  tmp.Write("kfd", "");
  EXPECT_FALSE(KfdPresent(tmp.path() + "/kfd"));
}

TEST(KfdSysfsTest, MissingProcDirectoryIsAnError) {
  TempDir kfd;  // exists, but has no proc/
  std::vector<SysfsQueue> queues;
  std::string error;
  EXPECT_FALSE(ReadKfdQueues(kfd.path(), &queues, &error));
  EXPECT_NE(error.find(kfd.path() + "/proc"), std::string::npos) << error;
}

TEST(KfdSysfsTest, EmptyProcDirectoryHasNoQueues) {
  TempDir kfd;
  kfd.MakeDir("proc");
  std::vector<SysfsQueue> queues = {SysfsQueue{}};  // replaced, not appended
  std::string error;
  ASSERT_TRUE(ReadKfdQueues(kfd.path(), &queues, &error)) << error;
  EXPECT_TRUE(queues.empty());
}

TEST(KfdSysfsTest, QueueMissingAFileIsSkipped) {
  TempDir kfd;
  WriteQueue(kfd, 100, 0, "45412", "0", "4096");
  kfd.Write("proc/100/queues/1/gpuid", "45412");  // destroyed mid-read:
  kfd.Write("proc/100/queues/1/type", "1");       // no size
  WriteQueue(kfd, 100, 2, "45412", "1", "8192");
  std::vector<SysfsQueue> queues;
  std::string error;
  ASSERT_TRUE(ReadKfdQueues(kfd.path(), &queues, &error)) << error;
  const std::vector<QueueTuple> want = {
      {100, 0, 45412, 0, 4096},
      {100, 2, 45412, 1, 8192},
  };
  EXPECT_EQ(Tuples(queues), want);
}

TEST(KfdSysfsTest, VanishedProcessesAndQueuesAreSkipped) {
  TempDir kfd;
  kfd.MakeDir("proc/100");           // exited: queues/ already gone
  kfd.MakeDir("proc/200/queues/5");  // queue dir emptied under us
  WriteQueue(kfd, 300, 1, "52963", "0", "65536");
  std::vector<SysfsQueue> queues;
  std::string error;
  ASSERT_TRUE(ReadKfdQueues(kfd.path(), &queues, &error)) << error;
  const std::vector<QueueTuple> want = {{300, 1, 52963, 0, 65536}};
  EXPECT_EQ(Tuples(queues), want);
}

TEST(KfdSysfsTest, SortsPidsAndQueueIdsNumerically) {
  TempDir kfd;
  WriteQueue(kfd, 1000, 10, "1", "0", "1");
  WriteQueue(kfd, 1000, 2, "1", "0", "2");
  WriteQueue(kfd, 30, 1, "2", "1", "3");
  WriteQueue(kfd, 200, 0, "3", "0", "4");
  std::vector<SysfsQueue> queues;
  std::string error;
  ASSERT_TRUE(ReadKfdQueues(kfd.path(), &queues, &error)) << error;
  const std::vector<QueueTuple> want = {
      {30, 1, 2, 1, 3},
      {200, 0, 3, 0, 4},
      {1000, 2, 1, 0, 2},
      {1000, 10, 1, 0, 1},
  };
  EXPECT_EQ(Tuples(queues), want);
}

TEST(KfdSysfsTest, ReadsSecondaryContextsAfterThePrimary) {
  // 7.2+: proc/<pid>/context_<id>/queues/<qid>/ (kfd_create_process_sysfs).
  TempDir kfd;
  WriteQueue(kfd, 77, 0, "5", "0", "1");
  for (const auto& [context, qid] : {std::pair{12, 0}, std::pair{3, 1}}) {
    const std::string dir = "proc/77/context_" + std::to_string(context) +
                            "/queues/" + std::to_string(qid) + "/";
    kfd.Write(dir + "gpuid", "5");
    kfd.Write(dir + "type", "3");
    kfd.Write(dir + "size", "2");
  }
  kfd.Write("proc/77/context_x/queues/0/gpuid", "5");  // not a context
  std::vector<SysfsQueue> queues;
  std::string error;
  ASSERT_TRUE(ReadKfdQueues(kfd.path(), &queues, &error)) << error;
  ASSERT_EQ(queues.size(), 3u);
  EXPECT_EQ(queues[0].context, kPrimaryContext);
  EXPECT_EQ(queues[1].context, 3u);
  EXPECT_EQ(queues[1].queue_id, 1u);
  EXPECT_EQ(queues[2].context, 12u);
  EXPECT_EQ(queues[2].type, 3u);
}

TEST(KfdSysfsTest, IgnoresEntriesThatAreNotProcessesOrQueues) {
  TempDir kfd;
  WriteQueue(kfd, 42, 3, "7", "0", "4096");
  kfd.Write("proc/42/pasid", "32770\n");
  kfd.Write("proc/42/vram_7", "0\n");
  kfd.Write("proc/42/stats_7/evicted_ms", "0\n");
  kfd.MakeDir("proc/42/queues/tmp");
  kfd.MakeDir("proc/self");
  kfd.Write("proc/notes", "x");
  std::vector<SysfsQueue> queues;
  std::string error;
  ASSERT_TRUE(ReadKfdQueues(kfd.path(), &queues, &error)) << error;
  const std::vector<QueueTuple> want = {{42, 3, 7, 0, 4096}};
  EXPECT_EQ(Tuples(queues), want);
}

TEST(KfdSysfsTest, AcceptsTrailingNewlineAndSkipsMalformedValues) {
  TempDir kfd;
  WriteQueue(kfd, 42, 0, "7\n", "1\n", "18446744073709551615\n");
  WriteQueue(kfd, 42, 1, "7", "-1", "4096");       // signed type
  WriteQueue(kfd, 42, 2, "7", "0", "");            // show() returned nothing
  WriteQueue(kfd, 42, 3, "4294967296", "0", "1");  // gpuid beyond 32 bits
  std::vector<SysfsQueue> queues;
  std::string error;
  ASSERT_TRUE(ReadKfdQueues(kfd.path(), &queues, &error)) << error;
  const std::vector<QueueTuple> want = {
      {42, 0, 7, 1, 18446744073709551615u},
  };
  EXPECT_EQ(Tuples(queues), want);
}

}  // namespace
}  // namespace gpuq::kfd_sysfs_test
