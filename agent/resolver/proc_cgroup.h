// The cgroup of a process, from /proc: needed for queues found in KFD sysfs,
// whose creation (and so whose cgroup id) the kernel side never saw.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpuq {

/// The cgroup v2 path of `pid` (the `0::` line of <procfs>/<pid>/cgroup).
std::optional<std::string> CgroupPathOfPid(const std::string& procfs,
                                           uint32_t pid);

/// The cgroup id of `path` under the v2 root: the directory's inode number,
/// which is what bpf_get_current_cgroup_id() returns for its members.
std::optional<uint64_t> CgroupIdOfPath(const std::string& v2_root,
                                       const std::string& path);

/// On a cgroup v1 host every task sits in the v2 root, so the v2 id names no
/// container: the first v1 hierarchy path of `pid` (any controller, in file
/// order) that is not the root, or nullopt.
std::optional<std::string> V1CgroupPathOfPid(const std::string& procfs,
                                             uint32_t pid);

/// <procfs>/<pid>/comm without the newline; "" if unreadable.
std::string CommOfPid(const std::string& procfs, uint32_t pid);

}  // namespace gpuq
