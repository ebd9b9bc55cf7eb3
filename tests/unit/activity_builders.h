// Builders for the activity records: ROCr queue creates, queue samples,
// doorbell counts, runlist operations and eviction transitions. Same
// conventions as event_builders.h.
#pragma once

#include <gpuq/abi.h>

#include <cstdint>

#include "event_builders.h"

namespace gpuq {

/// Where RocrCreate's queue `qid` keeps its write index (amd_queue_t +56).
inline uint64_t RocrWritePtr(uint32_t qid) {
  return 0x7e0000200038ull + qid * 0x400000ull;
}

/// A ROCr compute queue: amd_queue_t layout recognised, its doorbell signal
/// `handle` and write index `write_at_create` read at creation.
inline gpuq_queue_create_event RocrCreate(uint64_t pkey, uint32_t tgid,
                                          uint64_t cgroup, uint32_t gpu,
                                          uint32_t qid, uint64_t handle,
                                          uint64_t write_at_create = 0) {
  gpuq_queue_create_event e = Create(pkey, tgid, cgroup, gpu, qid);
  e.flags = GPUQ_CREATE_F_ROCR_LAYOUT;
  e.queue_format = GPUQ_QUEUE_FORMAT_AQL;
  e.write_ptr = RocrWritePtr(qid);
  e.read_ptr = RocrWritePtr(qid) + 0x48;  // amd_queue_t.read_dispatch_id
  e.doorbell_handle = handle;
  e.write_index_at_create = write_at_create;
  return e;
}

/// The sampler's read of queue `qid` at `ts_ns`, at RocrCreate's address.
inline gpuq_queue_sample_record Sample(uint64_t pkey, uint32_t tgid,
                                       uint64_t cgroup, uint32_t gpu,
                                       uint32_t qid, uint64_t write,
                                       uint64_t read, uint64_t ts_ns,
                                       bool readable = true) {
  gpuq_queue_sample_record r{};
  r.hdr = Hdr(GPUQ_EV_QUEUE_SAMPLE, pkey, tgid, cgroup, ts_ns);
  r.hdr.size = sizeof(r);
  r.gpu_id = gpu;
  r.queue_id = qid;
  r.write_ptr = RocrWritePtr(qid);
  r.write_index = readable ? write : 0;
  r.read_index = readable ? read : 0;
  r.flags = readable ? 0 : GPUQ_SAMPLE_F_UNREADABLE;
  return r;
}

/// Cumulative doorbell counts of (tgid, handle): kernel dispatches,
/// barriers and AMD extended kernel dispatches, one ring each; gpu 0 = the
/// poller did not know the handle.
inline gpuq_doorbell_count_record DoorbellCount(uint32_t tgid, uint64_t cgroup,
                                                uint64_t handle, uint32_t gpu,
                                                uint64_t dispatch,
                                                uint64_t barrier = 0,
                                                uint64_t ext = 0) {
  gpuq_doorbell_count_record r{};
  r.hdr = Hdr(GPUQ_EV_DOORBELL_COUNT, 0, tgid, cgroup);
  r.hdr.size = sizeof(r);
  r.doorbell_handle = handle;
  r.gpu_id = gpu;
  r.by_packet[GPUQ_PACKET_DISPATCH] = dispatch;
  r.by_packet[GPUQ_PACKET_BARRIER] = barrier;
  r.by_packet[GPUQ_PACKET_EXT_DISPATCH] = ext;
  r.doorbells = dispatch + barrier + ext;
  return r;
}

/// A runlist operation caused by (pkey, tgid, cgroup); all 0 = unknown.
inline gpuq_runlist_event Runlist(uint64_t pkey, uint32_t tgid, uint64_t cgroup,
                                  uint32_t gpu, uint32_t op, uint32_t cause,
                                  uint64_t duration_ns, int32_t ret = 0,
                                  uint32_t filter = 2) {
  gpuq_runlist_event e{};
  e.hdr = Hdr(GPUQ_EV_RUNLIST, pkey, tgid, cgroup);
  e.hdr.size = sizeof(e);
  e.gpu_id = gpu;
  e.op = op;
  e.cause = cause;
  e.filter = op == GPUQ_RUNLIST_UNMAP ? filter : 0;
  e.ret = ret;
  e.duration_ns = duration_ns;
  return e;
}

/// An eviction transition of (pkey, tgid, cgroup) on `gpu` at `ts_ns`.
inline gpuq_eviction_event Eviction(uint64_t pkey, uint32_t tgid,
                                    uint64_t cgroup, uint32_t gpu,
                                    uint32_t kind, uint32_t trigger,
                                    uint64_t ts_ns) {
  gpuq_eviction_event e{};
  e.hdr = Hdr(GPUQ_EV_EVICTION, pkey, tgid, cgroup, ts_ns);
  e.hdr.size = sizeof(e);
  e.gpu_id = gpu;
  e.kind = kind;
  e.trigger = trigger;
  return e;
}

}  // namespace gpuq
