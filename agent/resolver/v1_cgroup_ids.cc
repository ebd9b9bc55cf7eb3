#include "resolver/v1_cgroup_ids.h"

#include <functional>

#include "resolver/cgroup_path.h"
#include "resolver/proc_cgroup.h"

namespace gpuq {

std::optional<uint64_t> V1CgroupIds::Of(const gpuq_event_header& hdr,
                                        Attributor* attributor) {
  const Owner owner{hdr.tgid, hdr.process_key};
  const auto known = of_owner_.find(owner);
  if (known != of_owner_.end()) return known->second.id;
  const Attribution& a = attributor->Attribute(hdr.cgroup_id);
  const bool v2_root = a.resolved && a.cgroup_path == "/";
  if ((!v2_root && a.resolved) || hdr.tgid == 0) return std::nullopt;
  const auto path = V1CgroupPathOfPid(procfs_, hdr.tgid);
  if (!path) {
    // The pid is gone: a teardown under a process key not seen before (a
    // process seeded from sysfs has none) is the pid's last owner's.
    const Known* last = nullptr;
    for (auto it = of_owner_.lower_bound({hdr.tgid, 0});
         it != of_owner_.end() && it->first.first == hdr.tgid; ++it) {
      if (last == nullptr || it->second.seq > last->seq) last = &it->second;
    }
    if (last == nullptr) return std::nullopt;
    return last->id;
  }
  if (!ParseCgroupPath(*path).InContainer()) return std::nullopt;
  // Bit 63 keeps synthetic ids apart from kernfs ids (inode numbers).
  const uint64_t id = (std::hash<std::string>()(*path) >> 1) | (1ull << 63);
  attributor->Learn(id, *path);
  if (oldest_first_.size() >= kMaxOwners) {
    of_owner_.erase(oldest_first_.front());
    oldest_first_.pop_front();
  }
  of_owner_.emplace(owner, Known{id, next_seq_++});
  oldest_first_.push_back(owner);
  return id;
}

}  // namespace gpuq
