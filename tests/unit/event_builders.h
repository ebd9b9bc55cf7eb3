// Builders for the records of include/gpuq/abi.h: the ones bpf/gpuq.bpf.c
// emits and the ones the agent writes into captures. Filled by hand so a test
// states only what it is about: which process (process_key, tgid), which
// cgroup, which GPU and queue.
#pragma once

#include <gpuq/abi.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "sources/event.h"

namespace gpuq {

/// The common header of a kernel record: the struct kfd_process pointer
/// (`pkey`), the thread group and the cgroup of the process, and when
/// (CLOCK_MONOTONIC). `size` is left 0: the builders below set it, Encode()
/// fills it in for the rest.
inline gpuq_event_header Hdr(uint16_t type, uint64_t pkey, uint32_t tgid,
                             uint64_t cgroup, uint64_t ts_ns = 0) {
  gpuq_event_header h{};
  h.type = type;
  h.tgid = tgid;
  h.ts_ns = ts_ns;
  h.cgroup_id = cgroup;
  h.process_key = pkey;
  return h;
}

/// A queue created by a PyTorch worker (comm "pt_main_thread") with a 4 KiB
/// ring, seen by the primary hook (kfd_procfs_add_queue, no flags).
inline gpuq_queue_create_event Create(uint64_t pkey, uint32_t tgid,
                                      uint64_t cgroup, uint32_t gpu,
                                      uint32_t qid,
                                      uint32_t type = GPUQ_QUEUE_COMPUTE) {
  gpuq_queue_create_event e{};
  e.hdr = Hdr(GPUQ_EV_QUEUE_CREATE, pkey, tgid, cgroup);
  e.hdr.size = sizeof(e);
  e.gpu_id = gpu;
  e.queue_id = qid;
  e.queue_type = type;
  e.ring_size = 4096;
  std::strncpy(e.comm, "pt_main_thread", sizeof(e.comm) - 1);
  return e;
}

/// A queue found in KFD sysfs at start: no kernel identity yet (the model
/// keys it by tgid until a record names its kfd_process).
inline gpuq_queue_create_event Seeded(uint32_t tgid, uint64_t cgroup,
                                      uint32_t gpu, uint32_t qid,
                                      uint32_t type = GPUQ_QUEUE_COMPUTE) {
  gpuq_queue_create_event e = Create(0, tgid, cgroup, gpu, qid, type);
  e.flags = GPUQ_CREATE_F_SEEDED;
  std::strncpy(e.comm, "hipcc_bench", sizeof(e.comm) - 1);
  return e;
}

/// A queue destroyed, by default by its owner (AMDKFD_IOC_DESTROY_QUEUE).
inline gpuq_queue_destroy_event Destroy(uint64_t pkey, uint32_t tgid,
                                        uint64_t cgroup, uint32_t gpu,
                                        uint32_t qid, uint32_t type,
                                        uint32_t reason = GPUQ_DESTROY_IOCTL,
                                        uint32_t flags = 0) {
  gpuq_queue_destroy_event e{};
  e.hdr = Hdr(GPUQ_EV_QUEUE_DESTROY, pkey, tgid, cgroup);
  e.hdr.size = sizeof(e);
  e.gpu_id = gpu;
  e.queue_id = qid;
  e.queue_type = type;
  e.reason = reason;
  e.flags = flags;
  return e;
}

/// Reconciliation's destroy of a queue gone from sysfs whose destroy record
/// never came (Pipeline::ReconcileNow, RecoveredDestroy).
inline gpuq_queue_destroy_event Recovered(uint64_t pkey, uint32_t tgid,
                                          uint32_t qid) {
  gpuq_queue_destroy_event e = Destroy(
      pkey, tgid, 0, 0, qid, 0, GPUQ_DESTROY_UNKNOWN, GPUQ_DESTROY_F_RECOVERED);
  return e;
}

/// The owner's KFD process going away (kfd_process_notifier_release).
inline gpuq_process_exit_event Exit(uint64_t pkey, uint32_t tgid,
                                    uint64_t cgroup) {
  gpuq_process_exit_event e{};
  e.hdr = Hdr(GPUQ_EV_PROCESS_EXIT, pkey, tgid, cgroup);
  e.hdr.size = sizeof(e);
  return e;
}

/// A compute queue creation that failed with `error` (a negative errno).
inline gpuq_queue_create_failed_event CreateFailed(uint64_t pkey, uint32_t tgid,
                                                   uint64_t cgroup,
                                                   uint32_t gpu,
                                                   int32_t error) {
  gpuq_queue_create_failed_event e{};
  e.hdr = Hdr(GPUQ_EV_QUEUE_CREATE_FAILED, pkey, tgid, cgroup);
  e.hdr.size = sizeof(e);
  e.gpu_id = gpu;
  e.queue_type = GPUQ_QUEUE_COMPUTE;
  e.error = error;
  return e;
}

/// The agent's capture record of an MI300X (gfx942) at KFD node `node`, PCI
/// location `location_id`. Node 0 is the CPU, so node 1 has renderD128.
inline gpuq_gpu_info_record GpuInfo(uint32_t gpu_id, uint32_t node,
                                    uint32_t gfx = 90402,
                                    uint32_t location_id = 0x0500) {
  gpuq_gpu_info_record r{};
  r.hdr.type = GPUQ_EV_GPU_INFO;
  r.hdr.size = sizeof(r);
  r.gpu_id = gpu_id;
  r.node = node;
  r.vendor_id = 0x1002;
  r.device_id = 0x74a1;
  r.location_id = location_id;
  r.domain = 0;
  r.drm_render_minor = 127 + node;
  r.gfx_target_version = gfx;
  r.unique_id = 0xcf39ab978c9c839aull;
  r.simd_count = 1216;  // 304 CUs
  r.num_xcc = 8;
  std::strncpy(r.name, "gfx942", sizeof(r.name) - 1);
  r.simd_per_cu = 4;
  return r;
}

/// The agent's capture record naming cgroup id `cgroup`'s path.
inline CgroupPathRecord PathRecord(uint64_t cgroup, const std::string& path) {
  gpuq_event_header h{};
  h.type = GPUQ_EV_CGROUP_PATH;
  h.cgroup_id = cgroup;
  return CgroupPathRecord{h, path};
}

}  // namespace gpuq
