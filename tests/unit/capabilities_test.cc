// HasBpfPrivileges and HasCapSysAdmin (loader/kernel_features.h) read this
// process's effective capabilities with libcap: checked in children that
// keep only some of them (cap_set_proc), as the least-privilege deployment
// does (CAP_BPF, CAP_PERFMON without CAP_SYS_ADMIN).
#include <gtest/gtest.h>
#include <sys/capability.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include "loader/kernel_features.h"

namespace gpuq {
namespace {

// What `check` says in a child whose permitted and effective sets hold only
// `keep`: 1 true, 0 false, 2 the child could not drop the others.
int InChildKeeping(std::vector<cap_value_t> keep, bool (*check)()) {
  const pid_t pid = fork();
  if (pid == 0) {
    cap_t caps = cap_init();
    const int n = static_cast<int>(keep.size());
    if (caps == nullptr ||
        (n > 0 &&
         (cap_set_flag(caps, CAP_EFFECTIVE, n, keep.data(), CAP_SET) != 0 ||
          cap_set_flag(caps, CAP_PERMITTED, n, keep.data(), CAP_SET) != 0)) ||
        cap_set_proc(caps) != 0) {
      _exit(2);
    }
    _exit(check() ? 1 : 0);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
    return -1;
  }
  return WEXITSTATUS(status);
}

TEST(CapabilitiesTest, BpfNeedsSysAdminOrBothBpfAndPerfmon) {
  if (!HasCapSysAdmin()) GTEST_SKIP() << "needs root (CAP_SYS_ADMIN)";
  EXPECT_EQ(InChildKeeping({CAP_SYS_ADMIN}, HasBpfPrivileges), 1);
  EXPECT_EQ(InChildKeeping({CAP_BPF, CAP_PERFMON}, HasBpfPrivileges), 1);
  EXPECT_EQ(InChildKeeping({CAP_BPF}, HasBpfPrivileges), 0);
  EXPECT_EQ(InChildKeeping({CAP_PERFMON, CAP_SYS_PTRACE}, HasBpfPrivileges), 0);
  EXPECT_EQ(InChildKeeping({}, HasBpfPrivileges), 0);
}

TEST(CapabilitiesTest, SysAdminIsReadFromTheEffectiveSet) {
  if (!HasCapSysAdmin()) GTEST_SKIP() << "needs root (CAP_SYS_ADMIN)";
  EXPECT_EQ(InChildKeeping({CAP_BPF, CAP_PERFMON}, HasCapSysAdmin), 0);
  EXPECT_EQ(InChildKeeping({CAP_SYS_ADMIN, CAP_BPF}, HasCapSysAdmin), 1);
}

}  // namespace
}  // namespace gpuq
