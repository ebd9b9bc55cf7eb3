// The preemption model as the kernel shows it (loader/kernel_features.cc,
// ReadPreemptModel): debugfs sched/preempt first, then the command line's
// preempt=, then the flags uname -v carries. The texts are the kernels' own:
// sched/preempt as 6.1 (none voluntary full) and 7.3 (full lazy) print it,
// uname -v as Debian's builds print it.
#include <gtest/gtest.h>

#include "loader/kernel_features.h"

namespace gpuq {
namespace {

constexpr char kDebianDynamic[] =
    "#1 SMP PREEMPT_DYNAMIC Debian 7.3.4-1~bpo13+1 (2026-10-30)\n";

KernelFeatures Read(const std::string& sched_preempt,
                    const std::string& cmdline, const std::string& version) {
  KernelFeatures f;
  ReadPreemptModel(sched_preempt, cmdline, version, &f);
  return f;
}

TEST(PreemptModelTest, DebugfsNamesTheModeInParentheses) {
  KernelFeatures f = Read("full (lazy) \n", "", kDebianDynamic);
  EXPECT_TRUE(f.preempts_programs);
  EXPECT_EQ(f.preempt_note, "preempt=lazy (debugfs sched/preempt)");
  f = Read("none (voluntary) full \n", "preempt=full", kDebianDynamic);
  EXPECT_FALSE(f.preempts_programs) << "debugfs wins over the command line";
  EXPECT_EQ(f.preempt_note, "preempt=voluntary (debugfs sched/preempt)");
  EXPECT_TRUE(Read("none voluntary (full) \n", "", "").preempts_programs);
  EXPECT_FALSE(Read("(none) voluntary full \n", "", "").preempts_programs);
}

TEST(PreemptModelTest, CommandLineWhenDebugfsIsNotReadable) {
  KernelFeatures f =
      Read("", "BOOT_IMAGE=/vmlinuz root=/dev/vda1 preempt=voluntary quiet\n",
           kDebianDynamic);
  EXPECT_FALSE(f.preempts_programs);
  EXPECT_EQ(f.preempt_note, "preempt=voluntary (kernel command line)");
  EXPECT_TRUE(Read("", "preempt=full\n", kDebianDynamic).preempts_programs);
}

TEST(PreemptModelTest, DynamicModeUnknownIsAssumedPreemptible) {
  const KernelFeatures f = Read("", "root=/dev/vda1\n", kDebianDynamic);
  EXPECT_TRUE(f.preempts_programs);
  EXPECT_NE(f.preempt_note.find("mode unknown"), std::string::npos);
}

TEST(PreemptModelTest, StaticModelsFromUname) {
  EXPECT_TRUE(
      Read("", "", "#1 SMP PREEMPT_RT Fri Jan 2 2026\n").preempts_programs);
  EXPECT_TRUE(
      Read("", "", "#1 SMP PREEMPT Fri Jan 2 2026\n").preempts_programs);
  // none or voluntary built in: no PREEMPT word at all
  const KernelFeatures f = Read("", "preempt=full", "#1 SMP Fri Jan 2 2026\n");
  EXPECT_FALSE(f.preempts_programs);
  EXPECT_EQ(f.preempt_note, "none or voluntary (uname -v has no PREEMPT)");
}

TEST(PreemptModelTest, NothingReadableMeansNotPreemptible) {
  // Fixture trees without these files: the planner keeps trampolines.
  const KernelFeatures f = Read("", "preempt=full", "");
  EXPECT_FALSE(f.preempts_programs);
  EXPECT_EQ(f.preempt_note, "unknown (uname -v not readable)");
}

}  // namespace
}  // namespace gpuq
