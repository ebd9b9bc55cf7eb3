// Every filesystem root the agent reads, in one injectable value, so tests
// run on fixture trees (tests/fixtures/root) and a containerised agent can
// read the host's trees mounted elsewhere (--host-root /host).
#pragma once

#include <string>

namespace gpuq {

/// Roots of /sys and /proc. Thread-safety: a plain value.
struct HostPaths {
  std::string sysfs = "/sys";
  std::string procfs = "/proc";

  /// Both roots under one prefix: `<root>/sys`, `<root>/proc`.
  static HostPaths FromHostRoot(const std::string& root) {
    return HostPaths{root + "/sys", root + "/proc"};
  }
  /// amdkfd's sysfs directory (topology/, proc/).
  std::string Kfd() const { return sysfs + "/class/kfd/kfd"; }
  /// Where cgroup hierarchies are mounted.
  std::string CgroupMount() const { return sysfs + "/fs/cgroup"; }
  std::string KernelBtf() const { return sysfs + "/kernel/btf"; }
};

}  // namespace gpuq
