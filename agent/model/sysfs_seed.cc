#include "model/sysfs_seed.h"

#include <fmt/format.h>

#include <cstring>

#include "common/clock.h"
#include "resolver/gpu_topology.h"
#include "resolver/proc_cgroup.h"

namespace gpuq {

SysfsStart ReadSysfsStart(const HostPaths& paths) {
  SysfsStart start;
  const std::string kfd = paths.Kfd();
  if (!KfdPresent(kfd)) {
    start.warnings.push_back(fmt::format(
        "no amdkfd sysfs at {}: no GPU topology and no queues to seed", kfd));
    return start;
  }
  std::vector<GpuNode> nodes;
  std::string error;
  if (!ReadGpuTopology(kfd, &nodes, &error)) {
    start.warnings.push_back("GPU topology unavailable: " + error);
  }
  for (const GpuNode& node : nodes) start.gpus.push_back(ToRecord(node));
  std::vector<SysfsQueue> queues;
  if (!ReadKfdQueues(kfd, &queues, &error)) {
    start.warnings.push_back("cannot seed queues from sysfs: " + error);
    return start;
  }
  for (const SysfsQueue& q : queues) {
    if (q.context == kPrimaryContext) start.queues.push_back(q);
  }
  return start;
}

SeededQueue SeedQueue(const SysfsQueue& q, const HostPaths& paths,
                      const KfdQueueTypes& types, const std::string& v2_root) {
  SeededQueue s;
  gpuq_queue_create_event& e = s.event;
  e.hdr.type = GPUQ_EV_QUEUE_CREATE;
  e.hdr.size = sizeof(e);
  e.hdr.tgid = q.pid;
  e.hdr.ts_ns = MonotonicNowNs();
  const auto path = CgroupPathOfPid(paths.procfs, q.pid);
  if (path) {
    const auto id = CgroupIdOfPath(v2_root, *path);
    if (id) {
      e.hdr.cgroup_id = *id;
      s.cgroup_path = *path;
    }
  }
  e.gpu_id = q.gpu_id;
  e.queue_id = q.queue_id;
  e.queue_type = types.ToGpuq(q.type);
  e.ring_size = q.size;
  e.flags = GPUQ_CREATE_F_SEEDED;
  const std::string comm = CommOfPid(paths.procfs, q.pid);
  std::strncpy(e.comm, comm.c_str(), sizeof(e.comm) - 1);
  return s;
}

}  // namespace gpuq
