// cgroup id -> path learned when the cgroup was created (bpf/cgroup_watch),
// kept for a grace period after it is removed: what lets CgroupResolver
// attribute an id it first sees after the directory is gone. Bounded: only
// container cgroups are kept, at most `capacity` of them.
#pragma once

#include <chrono>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace gpuq {

/// Counters of a LearnedCgroups, for self-metrics.
struct LearnedCgroupStats {
  uint64_t remembered = 0;  ///< container cgroups held now
  uint64_t learned = 0;     ///< container cgroups ever learned
  uint64_t ignored = 0;     ///< creations of non-container cgroups
  uint64_t evicted = 0;     ///< forgotten early: the capacity was reached
  uint64_t expired = 0;     ///< forgotten `retention` after their removal
  uint64_t lost = 0;        ///< records the kernel could not pass on
};

/// Thread-safety: all methods are thread-safe (the watcher thread writes,
/// the pipeline's thread reads).
class LearnedCgroups {
 public:
  using Clock = std::chrono::steady_clock;

  /// `retention`: how long a removed cgroup's path stays (the agent's
  /// --container-grace); `capacity`: at most this many paths.
  LearnedCgroups(std::chrono::milliseconds retention, size_t capacity);

  /// A cgroup was created. Kept only if the path names a container
  /// (ParseCgroupPath): host cgroups stay resolvable by the walk while they
  /// exist, and hosts create many of them.
  void Created(uint64_t id, const std::string& path, Clock::time_point now);
  /// A cgroup was removed: its path stays for `retention` from `now`.
  void Removed(uint64_t id, Clock::time_point now);
  /// Forgets paths removed more than `retention` before `now`.
  void Expire(Clock::time_point now);
  /// Adds kernel-side losses (cumulative value).
  void SetLost(uint64_t lost);

  std::optional<std::string> Find(uint64_t id) const;
  LearnedCgroupStats Stats() const;

 private:
  struct Entry {
    std::string path;
    std::optional<Clock::time_point> removed_at;
    std::list<uint64_t>::iterator order;  // position in order_
  };

  const std::chrono::milliseconds retention_;
  const size_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<uint64_t, Entry> entries_;
  std::list<uint64_t> order_;  // ids, oldest creation first
  LearnedCgroupStats stats_;
};

}  // namespace gpuq
