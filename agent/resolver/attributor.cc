// cgroup id -> labels, pinned once resolved.
#include "resolver/attributor.h"

#include <utility>

namespace gpuq {
namespace {

Attribution FromPath(const std::string& path) {
  Attribution attribution;
  attribution.identity = ParseCgroupPath(path);
  // Host cgroups keep the empty label; containers get the short id, the
  // form `docker ps` and `crictl ps` print.
  attribution.container = attribution.identity.ShortId();
  attribution.cgroup_path = path;
  attribution.resolved = true;
  return attribution;
}

Attribution Unresolved() {
  Attribution attribution;
  attribution.container = kUnresolvedContainer;
  return attribution;
}

}  // namespace

Attributor::Attributor(CgroupResolver* resolver) : resolver_(resolver) {}

const Attribution& Attributor::Attribute(uint64_t cgroup_id) {
  auto it = cache_.find(cgroup_id);
  if (it != cache_.end() && it->second.resolved) return it->second;

  // New or still unresolved: ask the resolver, which rate-limits rescans, so
  // retrying on every call is cheap.
  if (std::optional<std::string> path = resolver_->PathOf(cgroup_id)) {
    Attribution attribution = FromPath(*path);
    if (it == cache_.end()) {
      return cache_.emplace(cgroup_id, std::move(attribution)).first->second;
    }
    // Replaces the `unresolved` answer in place: references handed out
    // earlier now see the pinned labels.
    it->second = std::move(attribution);
    return it->second;
  }
  if (it == cache_.end()) {
    ++unresolved_total_;  // counted on the first failure only
    it = cache_.emplace(cgroup_id, Unresolved()).first;
  }
  return it->second;
}

void Attributor::Learn(uint64_t cgroup_id, const std::string& path) {
  resolver_->Learn(cgroup_id, path);
  // A capture file's mapping is authoritative, like the resolver's Learn.
  cache_[cgroup_id] = FromPath(path);
  ++learned_;
}

}  // namespace gpuq
