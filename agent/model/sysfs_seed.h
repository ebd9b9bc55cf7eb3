// What amdkfd's sysfs (and /proc) say at start and at each reconciliation,
// as the records the model takes: the GPU topology, and a create record for
// each queue the agent did not see created (made before the agent started,
// or whose create was lost), flagged GPUQ_CREATE_F_SEEDED. Reading them is
// this file's job; when they are applied is the Pipeline's.
#pragma once

#include <gpuq/abi.h>

#include <optional>
#include <string>
#include <vector>

#include "common/host_paths.h"
#include "loader/kfd_queue_types.h"
#include "sources/kfd_sysfs.h"

namespace gpuq {

/// The topology and the queues sysfs shows at start; problems are warnings
/// (KFD may be absent), each one line.
struct SysfsStart {
  std::vector<gpuq_gpu_info_record> gpus;
  /// Primary contexts' queues only: a secondary context's are not seeded
  /// (Model::Diff says why).
  std::vector<SysfsQueue> queues;
  std::vector<std::string> warnings;
};
SysfsStart ReadSysfsStart(const HostPaths& paths);

/// A queue sysfs shows, as the create record the model seeds it from: its
/// process's cgroup (through /proc: sysfs knows the pid, not the cgroup),
/// comm, GPU, type and ring size, stamped now.
struct SeededQueue {
  gpuq_queue_create_event event{};
  /// The process's cgroup path, where /proc gave one that resolves to the
  /// event's cgroup id (the attribution learns it).
  std::optional<std::string> cgroup_path;
};
SeededQueue SeedQueue(const SysfsQueue& q, const HostPaths& paths,
                      const KfdQueueTypes& types, const std::string& v2_root);

}  // namespace gpuq
