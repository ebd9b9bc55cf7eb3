// What the planner needs from /proc/kallsyms: which hooked functions the
// kernel has as text symbols, their compiler clones, and whether amdgpu is
// loaded. The file lists every kernel symbol (about 200k lines with amdgpu
// loaded) and every agent start reads it, so it is split in place rather
// than line by line through iostreams.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

namespace gpuq {

struct KallsymsScan {
  std::set<std::string> present;  ///< asked-for functions that are text symbols
  /// Asked-for functions the compiler also emitted as a .constprop/.isra
  /// clone, by name (the clone's symbol).
  std::map<std::string, std::string> clones;
  bool amdgpu_loaded = false;  ///< some symbol of module [amdgpu]
  /// amdgpu has kfd_ioctl_create_process (secondary contexts, Linux 7.2).
  bool kfd_create_process = false;
};

/// Scans the kallsyms file `path` for `wanted`. A file that cannot be read
/// scans as empty (nothing present), as the kernel's own symbols would be
/// to a process without access.
KallsymsScan ScanKallsyms(const std::string& path,
                          const std::vector<std::string>& wanted);

}  // namespace gpuq
