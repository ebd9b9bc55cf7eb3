#include "resolver/v1_cgroup_ids.h"

#include <functional>

#include "resolver/cgroup_path.h"
#include "resolver/proc_cgroup.h"

namespace gpuq {

std::optional<uint64_t> V1CgroupIds::Of(const gpuq_event_header& hdr,
                                        Attributor* attributor) {
  auto known = of_tgid_.find(hdr.tgid);
  if (known != of_tgid_.end()) return known->second;
  const Attribution& a = attributor->Attribute(hdr.cgroup_id);
  const bool v2_root = a.resolved && a.cgroup_path == "/";
  if ((!v2_root && a.resolved) || hdr.tgid == 0) return std::nullopt;
  const auto path = V1CgroupPathOfPid(procfs_, hdr.tgid);
  if (!path || !ParseCgroupPath(*path).InContainer()) return std::nullopt;
  // Bit 63 keeps synthetic ids apart from kernfs ids (inode numbers).
  const uint64_t id = (std::hash<std::string>()(*path) >> 1) | (1ull << 63);
  attributor->Learn(id, *path);
  of_tgid_[hdr.tgid] = id;
  return id;
}

}  // namespace gpuq
