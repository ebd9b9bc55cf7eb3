#include "model/container_retirement.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace gpuq {

void RetireContainers(uint64_t grace_ns, Model* model, Attributor* attributor,
                      ContainerLabeling* labeling) {
  model->RetireIdleOwners(grace_ns);
  // A container goes when every cgroup attributed to it is idle; host and
  // unresolved series only fold (their totals must stay monotonic).
  std::map<std::string, std::vector<uint64_t>> by_container;
  std::set<std::string> busy;
  const auto idle = model->IdleCgroups(grace_ns);
  for (const auto& [key, owner] : model->owners()) {
    const Attribution& a = attributor->Attribute(key.first);
    if (!a.identity.InContainer()) continue;
    auto& cgroups = by_container[a.identity.container_id];
    if (cgroups.empty() || cgroups.back() != key.first) {
      cgroups.push_back(key.first);
    }
    if (idle.count(key.first) == 0) busy.insert(a.identity.container_id);
  }
  for (const auto& [container_id, cgroups] : by_container) {
    if (busy.count(container_id) != 0) continue;
    for (uint64_t cgroup : cgroups) model->EraseCgroup(cgroup);
    labeling->Forget(container_id);
  }
}

}  // namespace gpuq
