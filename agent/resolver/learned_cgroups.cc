// Bounded, time-limited memory of container cgroup paths.
#include "resolver/learned_cgroups.h"

#include <algorithm>

#include "resolver/cgroup_path.h"

namespace gpuq {

LearnedCgroups::LearnedCgroups(std::chrono::milliseconds retention,
                               size_t capacity)
    : retention_(retention), capacity_(std::max<size_t>(1, capacity)) {}

void LearnedCgroups::Created(uint64_t id, const std::string& path,
                             Clock::time_point now) {
  (void)now;
  std::lock_guard<std::mutex> lock(mu_);
  if (!ParseCgroupPath(path).InContainer()) {
    ++stats_.ignored;
    return;
  }
  auto it = entries_.find(id);
  if (it != entries_.end()) {  // kernfs ids are not reused; be safe anyway
    order_.erase(it->second.order);
    entries_.erase(it);
  }
  if (entries_.size() >= capacity_) {
    // The oldest creation goes first: a long-running container was resolved
    // by the walk long ago (ids are pinned once resolved).
    entries_.erase(order_.front());
    order_.pop_front();
    ++stats_.evicted;
  }
  order_.push_back(id);
  entries_.emplace(id, Entry{path, std::nullopt, std::prev(order_.end())});
  ++stats_.learned;
}

void LearnedCgroups::Removed(uint64_t id, Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(id);
  if (it != entries_.end() && !it->second.removed_at) {
    it->second.removed_at = now;
  }
}

void LearnedCgroups::Expire(Clock::time_point now) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->second.removed_at && now - *it->second.removed_at >= retention_) {
      order_.erase(it->second.order);
      it = entries_.erase(it);
      ++stats_.expired;
    } else {
      ++it;
    }
  }
}

void LearnedCgroups::SetLost(uint64_t lost) {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.lost = lost;
}

std::optional<std::string> LearnedCgroups::Find(uint64_t id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(id);
  if (it == entries_.end()) return std::nullopt;
  return it->second.path;
}

LearnedCgroupStats LearnedCgroups::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  LearnedCgroupStats s = stats_;
  s.remembered = entries_.size();
  return s;
}

}  // namespace gpuq
