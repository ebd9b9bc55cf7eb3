// cgroup id -> the labels a queue is exported under. Combines the resolver
// (id -> path) and the path parser (path -> container), and pins the answer:
// once an id is attributed, its labels never change, so counters stay
// monotonic per series even after the cgroup is gone.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "resolver/cgroup_path.h"
#include "resolver/cgroup_resolver.h"

namespace gpuq {

/// The per-container labels of a queue or process.
struct Attribution {
  /// `container` label until the runtime names it: short id, "" for host,
  /// kUnresolvedContainer when the id is unknown. The `pod` and `namespace`
  /// labels come only from the runtime's answer (ContainerLabeling::Labels).
  std::string container;
  ContainerIdentity identity;
  std::string cgroup_path;  ///< "" when unresolved
  bool resolved = false;
};

/// Label value for queues whose cgroup id could not be resolved to a path.
inline constexpr const char* kUnresolvedContainer = "unresolved";

/// Thread-safety: not thread-safe; the model's owner serialises calls.
class Attributor {
 public:
  explicit Attributor(CgroupResolver* resolver);

  /// Attribution of `cgroup_id`. Resolved answers are pinned; unresolved ids
  /// are retried on later calls (the resolver rate-limits rescans). Each id
  /// that fails its first resolution adds one to UnresolvedTotal().
  const Attribution& Attribute(uint64_t cgroup_id);
  /// Pins `path` for `cgroup_id` (capture files carry these).
  void Learn(uint64_t cgroup_id, const std::string& path);

  /// Distinct cgroup ids that failed to resolve when first seen.
  uint64_t UnresolvedTotal() const { return unresolved_total_; }
  /// Learn() calls so far: an answer given before may have changed since.
  uint64_t Learned() const { return learned_; }

 private:
  CgroupResolver* resolver_;
  std::unordered_map<uint64_t, Attribution> cache_;
  uint64_t unresolved_total_ = 0;
  uint64_t learned_ = 0;
};

}  // namespace gpuq
