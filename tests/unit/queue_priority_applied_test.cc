// QueuePriorityOfRelease and LoadQueuePriorityFact
// (loader/queue_priority_applied.h): which kernels apply a queue's own
// priority, decided before anything loads. The kernel tier holds the
// daemon's gpuq_kernel_queue_priority_info to Debian's 6.1 and 7.3.
#include "loader/queue_priority_applied.h"

#include <gtest/gtest.h>
#include <sys/utsname.h>

#include <filesystem>
#include <fstream>

#include "test_support.h"

namespace gpuq {
namespace {

TEST(QueuePriorityAppliedTest, ReleasesBeforeSevenProgramTheQueuePriority) {
  for (const char* r : {"6.1.0-57-amd64", "6.12.118+deb12-amd64", "6.19.2"}) {
    const QueuePriorityFact f = QueuePriorityOfRelease(r);
    EXPECT_EQ(f.applied, QueuePriorityApplied::kProgrammed) << r;
    EXPECT_EQ(f.release, r);
  }
  for (const char* r : {"7.0.0", "7.3.4+deb13-amd64", "8.1"}) {
    EXPECT_EQ(QueuePriorityOfRelease(r).applied, QueuePriorityApplied::kIgnored)
        << r;
  }
  const QueuePriorityFact bad = QueuePriorityOfRelease("custom");
  EXPECT_EQ(bad.applied, QueuePriorityApplied::kUnknown);
  EXPECT_NE(bad.why.find("not understood"), std::string::npos) << bad.why;
}

TEST(QueuePriorityAppliedTest, Labels) {
  EXPECT_STREQ(QueuePriorityAppliedLabel(QueuePriorityApplied::kProgrammed),
               "programmed");
  EXPECT_STREQ(QueuePriorityAppliedLabel(QueuePriorityApplied::kIgnored),
               "ignored");
  EXPECT_STREQ(QueuePriorityAppliedLabel(QueuePriorityApplied::kUnknown),
               "unknown");
}

TEST(QueuePriorityAppliedTest, AnOutOfTreeAmdgpuIsUnknown) {
  utsname u{};
  ASSERT_EQ(uname(&u), 0);
  TempDir sys;
  HostPaths paths{sys.path(), "/proc"};
  std::filesystem::create_directories(sys.path() + "/module/amdgpu");
  EXPECT_EQ(LoadQueuePriorityFact(paths).applied,
            QueuePriorityOfRelease(u.release).applied)
      << "in-tree amdgpu: the release decides";
  std::ofstream(sys.path() + "/module/amdgpu/version") << "6.10.5\n";
  const QueuePriorityFact dkms = LoadQueuePriorityFact(paths);
  EXPECT_EQ(dkms.applied, QueuePriorityApplied::kUnknown);
  EXPECT_EQ(dkms.release, u.release);
  std::filesystem::remove(sys.path() + "/module/amdgpu/version");
  std::filesystem::create_directories(sys.path() + "/module/amdkcl");
  EXPECT_EQ(LoadQueuePriorityFact(paths).applied,
            QueuePriorityApplied::kUnknown);
}

}  // namespace
}  // namespace gpuq
