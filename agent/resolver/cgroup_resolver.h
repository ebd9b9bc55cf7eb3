// cgroup id -> cgroup path on the host, by walking the cgroup v2 hierarchy
// (on hybrid hosts, the `unified` mount). The id of a v2 cgroup is the inode
// number of its directory (kernfs node id).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "resolver/learned_cgroups.h"

namespace gpuq {

/// Resolves cgroup ids to paths with a positive cache, a negative cache and a
/// rescan of the hierarchy on a miss, at most once per `min_rescan_interval`.
/// Paths once answered stay (ids of removed cgroups remain attributable);
/// the last walk's other paths are replaced by the next walk, so a host that
/// creates and removes many cgroups does not grow the cache. Ids of cgroups
/// removed before any walk saw them are answered from LearnedCgroups (paths
/// learned at creation) when one is set.
/// Thread-safety: not thread-safe; the owner serialises calls.
class CgroupResolver {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  /// `cgroup_mount` is where hierarchies are mounted
  /// (HostPaths::CgroupMount()).
  explicit CgroupResolver(
      std::string cgroup_mount,
      std::chrono::milliseconds min_rescan_interval = std::chrono::seconds(1),
      Clock clock = std::chrono::steady_clock::now);

  /// The path relative to the v2 root ("/" for the root itself), or nullopt.
  std::optional<std::string> PathOf(uint64_t cgroup_id);
  /// Records a known mapping (from a capture file); it takes precedence.
  void Learn(uint64_t cgroup_id, std::string path);
  /// Paths learned at cgroup creation, asked before a walk (may be null;
  /// must outlive the resolver).
  void SetLearned(const LearnedCgroups* learned) { learned_ = learned; }
  /// The directory used as the v2 root, "" if none was found.
  const std::string& V2Root() const { return v2_root_; }
  uint64_t Rescans() const { return rescans_; }

 private:
  void Rescan();

  std::string v2_root_;
  std::chrono::milliseconds min_rescan_interval_;
  Clock clock_;
  std::optional<std::chrono::steady_clock::time_point> last_rescan_;
  const LearnedCgroups* learned_ = nullptr;
  std::unordered_map<uint64_t, std::string> paths_;   // answered: pinned
  std::unordered_map<uint64_t, std::string> walked_;  // the last walk
  std::unordered_set<uint64_t> unresolved_;
  uint64_t rescans_ = 0;
};

}  // namespace gpuq
