// Feeds LearnedCgroups from the kernel: bpf/cgroup_watch.bpf.c on the
// cgroup_mkdir/cgroup_rmdir raw tracepoints, read on a thread of its own.
// Optional: without it (no privileges, a kernel refusing the programs) the
// resolver still walks /sys/fs/cgroup, and only cgroups that are gone before
// their first event stay unresolved.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "loader/probe_status.h"
#include "resolver/learned_cgroups.h"

struct cgroup_watch_bpf;
struct ring_buffer;

namespace gpuq {

/// Thread-safety: construct and destroy on one thread; the worker thread
/// only writes into the LearnedCgroups.
class CgroupWatcher {
 public:
  /// Loads and attaches the programs and starts reading. nullptr + *error
  /// (one line) on failure. `learned` must outlive the watcher.
  static std::unique_ptr<CgroupWatcher> Start(LearnedCgroups* learned,
                                              std::string* error);
  ~CgroupWatcher();
  CgroupWatcher(const CgroupWatcher&) = delete;
  CgroupWatcher& operator=(const CgroupWatcher&) = delete;

  /// The rows of gpuq_probe_attached: cgroup_mkdir, cgroup_rmdir (raw_tp).
  static std::vector<ProbeStatus> Probes(bool attached,
                                         const std::string& detail);

 private:
  CgroupWatcher() = default;
  static int OnRecord(void* ctx, void* data, size_t size);
  void Work();
  uint64_t KernelLosses() const;

  LearnedCgroups* learned_ = nullptr;
  cgroup_watch_bpf* skel_ = nullptr;
  mutable std::atomic<uint64_t> last_losses_{0};  // KernelLosses
  ring_buffer* rb_ = nullptr;
  std::atomic<bool> stop_{false};
  std::thread worker_;
};

}  // namespace gpuq
