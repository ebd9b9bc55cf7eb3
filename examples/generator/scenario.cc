#include "scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <random>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "resolver/container_metadata_json.h"
#include "sources/runtime_knobs.h"

namespace gpuq {
namespace {

constexpr uint64_t kUs = 1000;
constexpr uint64_t kMs = 1000 * kUs;

// enum kfd_unmap_queues_filter (kfd_priv.h).
constexpr uint32_t kFilterAll = 1;
constexpr uint32_t kFilterDynamic = 2;

// The doorbell signal of the host's pre-existing queue (its create was
// never seen, so the agent cannot map the handle to a GPU).
constexpr uint64_t kHostSeededDoorbell = 0x7f3a5c601000ull;

// Kernel events start a little after the agent's start records, as the
// agent writes topology, cgroup paths and seeded queues before it attaches.
constexpr uint64_t kFirstEventNs = kScenarioStartNs + 50 * kMs;

// struct kfd_process is kzalloc'ed from kmalloc-2k in the direct map, so
// real keys look like 0xffff8881xxxxx800. Keys below are base + n * 0x800;
// n < 2^21 keeps them all inside 0xffff8881........ and distinct.
constexpr uint64_t kProcessKeyBase = 0xffff888100000000ull;
constexpr uint64_t kKfdProcessSlab = 0x800;

// Ring sizes ROCr asks for: compute AQL queues of 4096 64-byte packets, and
// the 1 MiB SDMA blit ring (same values as tests/fixtures/root sysfs).
constexpr uint64_t kComputeRingSize = 4096 * 64;
constexpr uint64_t kSdmaRingSize = 1024 * 1024;
// amd_queue_t offsets ROCr passes as the queue's write and read pointers.
constexpr uint64_t kAmdQueueWritePtrOffset = 56;
constexpr uint64_t kAmdQueueReadPtrOffset = 128;
// Each queue gets a 4 MiB slot of its process's address space: ring first,
// its control page (amd_queue_t or SDMA rptr/wptr) 2 MiB in.
constexpr uint64_t kQueueSlot = 4 * 1024 * 1024;
constexpr uint64_t kQueueCtlOffset = 2 * 1024 * 1024;
// The queue's doorbell signal (an amd_signal_t ROCr allocates) sits one page
// after its amd_queue_t; its address is the hsa_signal_t handle.
constexpr uint64_t kDoorbellSignalOffset = 0x1000;

// libhsakmt maps HSA_QUEUE_PRIORITY_NORMAL (0) to KFD priority 7 (of 0..15).
constexpr uint32_t kPriorityNormal = 7;
constexpr uint32_t kPercentageFull = 100;

// splitmix64: a fixed mixing function, so derived values do not depend on
// the standard library (std::uniform_*_distribution is implementation-defined,
// std::mt19937_64's raw output is not).
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// User VA where a process's queues live: an ASLR-looking mmap base below
// 0x7f0000000000, page aligned. Address spaces are per process, so two
// processes may overlap, as they do on a real host.
uint64_t ProcessVaBase(uint32_t pid) {
  return 0x7e0000000000ull + ((Mix(pid) & 0xfffffffull) << 12);
}

template <size_t N>
void CopyName(char (&dst)[N], const std::string& src) {
  const size_t len = std::min(src.size(), N - 1);  // keep a NUL, as the kernel
  std::memcpy(dst, src.data(), len);
}

std::string Hex64(std::mt19937_64& rng) {
  std::string out;
  for (int i = 0; i < 4; ++i) out += fmt::format("{:016x}", rng());
  return out;
}

// One MI300X OAM in an 8-GPU node: what KFD topology shows for it.
struct GpuSpec {
  uint32_t gpu_id;  // KFD's 16-bit hash of the device: any distinct value
  uint32_t pci_bus;
  uint64_t unique_id;
};

constexpr GpuSpec kMi300xNode[] = {
    {11437, 0x05, 0xcf39ab978c9c839aull}, {23710, 0x15, 0x9e79762f5dad8082ull},
    {30584, 0x65, 0x5386c9cd62e98913ull}, {39261, 0x75, 0x883cfe649e3bb162ull},
    {48090, 0x85, 0x11d4799cf1e550baull}, {52417, 0x95, 0xdc5269525276daccull},
    {60833, 0xe5, 0xa2298be43499ceefull}, {64512, 0xf5, 0x486000a91ca49f1bull},
};
constexpr uint32_t kNumGpus = sizeof(kMi300xNode) / sizeof(kMi300xNode[0]);

gpuq_gpu_info_record Mi300xRecord(uint32_t index, uint64_t ts_ns) {
  gpuq_gpu_info_record r;
  std::memset(&r, 0, sizeof(r));
  r.hdr.type = GPUQ_EV_GPU_INFO;
  r.hdr.ts_ns = ts_ns;
  r.gpu_id = kMi300xNode[index].gpu_id;
  r.node = index + 1;  // node 0 is the CPU
  r.vendor_id = 0x1002;
  r.device_id = 0x74a1;
  r.location_id = kMi300xNode[index].pci_bus << 8;  // device 0, function 0
  r.domain = 0;
  r.drm_render_minor = 128 + index;
  r.gfx_target_version = 90402;
  r.unique_id = kMi300xNode[index].unique_id;
  r.simd_count = 304 * 4;  // 304 CUs, 4 SIMDs each (KFD counts SIMDs)
  r.simd_per_cu = 4;
  r.num_xcc = 8;
  CopyName(r.name, "gfx942");
  return r;
}

// MI300X in CPX mode: each GPU is 8 KFD nodes, one per XCC (kNumXcc),
// with what kfd_topology_add_device() gives a partition (amdkfd: with
// kfd->num_nodes > 1, location_id |= the node id, i.e. the partition in the
// PCI function bits; the GPU's unique_id on each; one XCC's 38 CUs). KFD's
// gpu_id hashes the XCC range too: any distinct value stands in for it.
constexpr uint32_t kCpxPartitions = 8;

uint32_t CpxGpuId(uint32_t index, uint32_t partition) {
  return partition == 0
             ? kMi300xNode[index].gpu_id
             : (kMi300xNode[index].gpu_id + partition * 1031) % 65521;
}

gpuq_gpu_info_record Mi300xCpxRecord(uint32_t index, uint32_t partition,
                                     uint64_t ts_ns) {
  gpuq_gpu_info_record r = Mi300xRecord(index, ts_ns);
  r.gpu_id = CpxGpuId(index, partition);
  r.node = 1 + index * kCpxPartitions + partition;
  r.location_id |= partition;
  r.drm_render_minor = 128 + index * kCpxPartitions + partition;
  r.simd_count = 38 * 4;
  r.num_xcc = 1;
  return r;
}

// A Radeon PRO W7900 (Navi 31, gfx1100) in a PCIe slot of the same host:
// RDNA3 schedules with MES, so its queue operations are MES add/remove.
constexpr uint32_t kW7900GpuId = 47101;

gpuq_gpu_info_record W7900Record() {
  gpuq_gpu_info_record r;
  std::memset(&r, 0, sizeof(r));
  r.hdr.type = GPUQ_EV_GPU_INFO;
  r.gpu_id = kW7900GpuId;
  r.node = kNumGpus + 1;
  r.vendor_id = 0x1002;
  r.device_id = 0x7448;
  r.location_id = 0xc3 << 8;
  r.domain = 0;
  r.drm_render_minor = 128 + kNumGpus;
  r.gfx_target_version = 110000;
  r.unique_id = 0x61b2e07f4c93d5a8ull;
  r.simd_count = 96 * 2;  // 96 CUs, 2 SIMDs each on RDNA3
  r.simd_per_cu = 2;
  r.num_xcc = 1;
  CopyName(r.name, "gfx1100");
  return r;
}

struct Process {
  uint32_t pid;
  uint64_t cgroup_id;
  uint64_t key;
  std::string comm;
  std::vector<bool> qid_used;  // KFD's per-process queue_slot_bitmap
};

struct Queue {
  size_t process;
  uint32_t queue_id;
  uint32_t gpu_id;
  uint32_t type;
};

// A queue's index values as the sampler would read them.
struct Indexes {
  uint64_t write;
  uint64_t read;
};

// What an HWS map reads of the runlist it left (GPUQ_EV_RUNLIST's fields).
struct RunlistRead {
  uint32_t processes;
  uint32_t compute_queues;
  uint32_t process_limit;
  uint32_t compute_queue_limit;
};

// Turns scenario steps into records, keeping the invariants the real agent's
// output has: cgroup path before first use, increasing timestamps, KFD's
// lowest-free queue id allocation.
class Emitter {
 public:
  Emitter(const EventSink& sink, uint64_t seed) : sink_(sink), rng_(seed) {}

  bool ok() const { return ok_; }
  const ScenarioSummary& summary() const { return summary_; }
  std::mt19937_64& rng() { return rng_; }

  void GpuInfos() {
    for (uint32_t i = 0; i < kNumGpus; ++i) {
      Emit(Mi300xRecord(i, start_ns_));
      ++summary_.gpu_infos;
    }
  }

  void GpuInfo(gpuq_gpu_info_record r) {
    r.hdr.ts_ns = start_ns_;
    Emit(r);
    ++summary_.gpu_infos;
  }

  // Moves the clock to `ts_ns` (never backwards): phases at fixed times.
  uint64_t AdvanceTo(uint64_t ts_ns) {
    now_ns_ = std::max(now_ns_, ts_ns);
    return now_ns_;
  }
  uint64_t now() const { return now_ns_; }

  // The doorbell signal handle a ROCr queue's create record carries.
  uint64_t DoorbellHandle(const Queue& q) const {
    return QueueSlot(processes_[q.process], q) + kQueueCtlOffset +
           kDoorbellSignalOffset;
  }

  // One sampler read of a queue's indexes (GPUQ_EV_QUEUE_SAMPLE), at ts_ns.
  void Sample(const Queue& q, uint64_t ts_ns, Indexes idx, bool readable) {
    const Process& p = processes_[q.process];
    gpuq_queue_sample_record r;
    std::memset(&r, 0, sizeof(r));
    r.hdr = OwnerHeader(GPUQ_EV_QUEUE_SAMPLE, p, AdvanceTo(ts_ns));
    r.gpu_id = q.gpu_id;
    r.queue_id = q.queue_id;
    r.write_ptr = WritePtr(p, q);
    if (readable) {
      r.write_index = idx.write;
      r.read_index = idx.read;
    } else {
      r.flags = GPUQ_SAMPLE_F_UNREADABLE;
    }
    Emit(r);
  }

  // The sampler's read of a process's runtime knobs, from the environment
  // entries ("NAME=VALUE") it was started with.
  void Knobs(size_t process, uint64_t ts_ns,
             const std::vector<std::string>& environment) {
    std::string bytes;
    for (const std::string& e : environment) bytes += e + '\0';
    RuntimeKnobsParser parser;
    parser.Feed(bytes.data(), bytes.size());
    gpuq_process_knobs_record r = parser.Finish();
    r.hdr = OwnerHeader(GPUQ_EV_PROCESS_KNOBS, processes_[process],
                        AdvanceTo(ts_ns));
    Emit(r);
  }

  // The doorbell poller's cumulative counts of one (process, handle).
  // `q` is the queue the handle belongs to, or null when unknown.
  void DoorbellCount(size_t process, uint64_t handle, const Queue* q,
                     uint64_t ts_ns, uint64_t dispatch, uint64_t barrier,
                     uint64_t other, uint64_t unreadable) {
    const Process& p = processes_[process];
    gpuq_doorbell_count_record r;
    std::memset(&r, 0, sizeof(r));
    r.hdr = OwnerHeader(GPUQ_EV_DOORBELL_COUNT, p, AdvanceTo(ts_ns));
    r.doorbell_handle = handle;
    if (q != nullptr) {
      r.gpu_id = q->gpu_id;
      r.queue_id = q->queue_id;
    }
    r.by_packet[GPUQ_PACKET_DISPATCH] = dispatch;
    r.by_packet[GPUQ_PACKET_BARRIER] = barrier;
    r.by_packet[GPUQ_PACKET_OTHER] = other;
    r.by_packet[GPUQ_PACKET_UNREADABLE] = unreadable;
    r.doorbells = dispatch + barrier + other + unreadable;
    Emit(r);
  }

  // A runlist operation returning at the next tick (or at ts_ns if later);
  // `cause_process` is null when no process operation caused it.
  void Runlist(const size_t* cause_process, uint32_t gpu_id, uint32_t op,
               uint32_t cause, uint32_t filter, int32_t ret, uint32_t queue_id,
               uint64_t duration_ns, uint64_t ts_ns = 0) {
    Emit(RunlistRecord(cause_process, gpu_id, op, cause, filter, ret, queue_id,
                       duration_ns, ts_ns));
  }

  // An HWS map that read the runlist it left (the BTF tiers'
  // GPUQ_RUNLIST_F_RUNLIST_READ), at the next tick or at ts_ns if non-zero.
  void MapRead(const size_t* cause_process, uint32_t gpu_id, uint32_t cause,
               uint64_t duration_ns, uint64_t ts_ns, const RunlistRead& rl) {
    gpuq_runlist_event e =
        RunlistRecord(cause_process, gpu_id, GPUQ_RUNLIST_MAP, cause, 0, 0, 0,
                      duration_ns, ts_ns);
    e.flags = GPUQ_RUNLIST_F_RUNLIST_READ;
    e.processes = rl.processes;
    e.compute_queues = rl.compute_queues;
    e.process_limit = rl.process_limit;
    e.compute_queue_limit = rl.compute_queue_limit;
    // pm_calc_rlib_size's tests (the GWS count stays 0 here)
    if (rl.processes > std::max(rl.process_limit, 1u) ||
        rl.compute_queues > rl.compute_queue_limit) {
      e.flags |= GPUQ_RUNLIST_F_OVERSUBSCRIBED;
    }
    Emit(e);
  }

  // An eviction state change of `process` on `gpu_id` at ts_ns.
  void Eviction(size_t process, uint32_t gpu_id, uint32_t kind,
                uint32_t trigger, uint64_t duration_ns, uint32_t queues,
                uint64_t ts_ns) {
    gpuq_eviction_event e;
    std::memset(&e, 0, sizeof(e));
    e.hdr =
        OwnerHeader(GPUQ_EV_EVICTION, processes_[process], AdvanceTo(ts_ns));
    e.gpu_id = gpu_id;
    e.kind = kind;
    e.trigger = trigger;
    e.duration_ns = duration_ns;
    e.queues = queues;
    Emit(e);
  }

  void DeclareCgroup(uint64_t cgroup_id, std::string path) {
    cgroup_paths_.emplace(cgroup_id, std::move(path));
  }

  // What the container runtime reported, written right after the cgroup's
  // path, as the recording agent does once its lookup has answered.
  void DeclareMetadata(uint64_t cgroup_id, const ContainerMetadata& metadata) {
    cgroup_metadata_.emplace(cgroup_id, MetadataToJson(metadata));
  }

  size_t AddProcess(uint32_t pid, uint64_t cgroup_id, uint64_t key,
                    std::string comm) {
    processes_.push_back(Process{pid, cgroup_id, key, std::move(comm), {}});
    ++summary_.processes;
    return processes_.size() - 1;
  }

  // A queue the agent found in KFD sysfs at start: only what sysfs and
  // /proc/<pid>/comm tell (gpuid, type, size; no kernel key, no addresses).
  Queue Seed(size_t process, uint32_t gpu_id, uint32_t type) {
    Process& p = processes_[process];
    const Queue q{process, AllocQueueId(p), gpu_id, type};
    gpuq_queue_create_event e = CreateRecord(p, q, start_ns_);
    e.hdr.process_key = 0;
    e.ring_address = 0;
    e.read_ptr = 0;
    e.write_ptr = 0;
    e.priority = 0;
    e.percentage = 0;
    e.flags = GPUQ_CREATE_F_SEEDED;
    e.doorbell_handle = 0;
    Emit(e);
    ++summary_.creates;
    ++summary_.seeded_creates;
    ++live_;
    return q;
  }

  // At the next tick, or at ts_ns (fixed-time scenarios) if non-zero.
  Queue Create(size_t process, uint32_t gpu_id, uint32_t type,
               uint64_t ts_ns = 0, uint32_t priority = kPriorityNormal) {
    Process& p = processes_[process];
    const Queue q{process, AllocQueueId(p), gpu_id, type};
    gpuq_queue_create_event e =
        CreateRecord(p, q, ts_ns != 0 ? AdvanceTo(ts_ns) : Tick());
    e.priority = priority;
    Emit(e);
    ++summary_.creates;
    ++live_;
    return q;
  }

  // A compute queue whose ring is PM4, not ROCr's AQL (a runtime of its own):
  // no amd_queue_t, so no layout flag and no doorbell signal to learn; the
  // sampler cannot count its submissions (gpuq_unsampled_queues: not_rocr).
  Queue CreatePm4Compute(size_t process, uint32_t gpu_id, uint64_t ts_ns) {
    Process& p = processes_[process];
    const Queue q{process, AllocQueueId(p), gpu_id, GPUQ_QUEUE_COMPUTE};
    gpuq_queue_create_event e = CreateRecord(p, q, AdvanceTo(ts_ns));
    e.queue_format = GPUQ_QUEUE_FORMAT_PM4;
    e.flags = 0;
    e.doorbell_handle = 0;
    Emit(e);
    ++summary_.creates;
    ++live_;
    return q;
  }

  // A successful AMDKFD_IOC_SET_CU_MASK on `q` at ts_ns: the first
  // `enabled_cus` CUs of a `num_cu_mask`-bit mask on.
  void CuMask(const Queue& q, uint32_t num_cu_mask, uint32_t enabled_cus,
              uint64_t ts_ns) {
    gpuq_queue_cu_mask_event e;
    std::memset(&e, 0, sizeof(e));
    e.hdr = OwnerHeader(GPUQ_EV_QUEUE_CU_MASK, processes_[q.process],
                        AdvanceTo(ts_ns));
    e.gpu_id = q.gpu_id;
    e.queue_id = q.queue_id;
    e.num_cu_mask = num_cu_mask;
    e.words_read = std::min<uint32_t>(num_cu_mask / 32, GPUQ_CU_MASK_WORDS);
    for (uint32_t cu = 0; cu < enabled_cus && cu / 32 < e.words_read; ++cu) {
      e.mask[cu / 32] |= 1u << (cu % 32);
    }
    Emit(e);
  }

  void Destroy(const Queue& q, uint32_t reason, uint32_t flags = 0,
               uint64_t ts_ns = 0) {
    Process& p = processes_[q.process];
    gpuq_queue_destroy_event e;
    std::memset(&e, 0, sizeof(e));
    e.hdr = OwnerHeader(GPUQ_EV_QUEUE_DESTROY, p,
                        ts_ns != 0 ? AdvanceTo(ts_ns) : Tick());
    e.gpu_id = q.gpu_id;
    e.queue_id = q.queue_id;
    e.queue_type = q.type;
    e.reason = reason;
    e.flags = flags;
    Emit(e);
    p.qid_used[q.queue_id] = false;
    if (reason == GPUQ_DESTROY_PROCESS_EXIT) {
      ++summary_.destroys_process_exit;
    } else {
      ++summary_.destroys_ioctl;
    }
    if ((flags & GPUQ_DESTROY_F_UNTRACKED) != 0) ++summary_.untracked_destroys;
    --live_;
  }

  void Exit(size_t process, uint64_t ts_ns = 0) {
    const Process& p = processes_[process];
    gpuq_process_exit_event e;
    std::memset(&e, 0, sizeof(e));
    e.hdr = OwnerHeader(GPUQ_EV_PROCESS_EXIT, p,
                        ts_ns != 0 ? AdvanceTo(ts_ns) : Tick());
    CopyName(e.comm, p.comm);
    Emit(e);
    ++summary_.process_exits;
  }

  void CreateFailed(size_t process, uint32_t gpu_id, uint32_t type,
                    int32_t error) {
    const Process& p = processes_[process];
    gpuq_queue_create_failed_event e;
    std::memset(&e, 0, sizeof(e));
    e.hdr = OwnerHeader(GPUQ_EV_QUEUE_CREATE_FAILED, p, Tick());
    e.gpu_id = gpu_id;
    e.queue_type = type;
    e.error = error;
    CopyName(e.comm, p.comm);
    Emit(e);
    ++summary_.create_failures;
  }

  ScenarioSummary Finish() {
    summary_.live_queues = live_;
    return summary_;
  }

 private:
  // A few ms between kernel events, jittered by the seeded engine.
  uint64_t Tick() {
    now_ns_ += 1 * kMs + rng_() % (3 * kMs);
    return now_ns_;
  }

  // Lowest free id, as find_first_zero_bit() on KFD's queue_slot_bitmap.
  static uint32_t AllocQueueId(Process& p) {
    for (uint32_t id = 0; id < p.qid_used.size(); ++id) {
      if (!p.qid_used[id]) {
        p.qid_used[id] = true;
        return id;
      }
    }
    p.qid_used.push_back(true);
    return static_cast<uint32_t>(p.qid_used.size() - 1);
  }

  gpuq_event_header OwnerHeader(uint16_t type, const Process& p,
                                uint64_t ts_ns) {
    EnsureCgroup(p.cgroup_id, ts_ns);
    gpuq_event_header h;
    std::memset(&h, 0, sizeof(h));
    h.type = type;
    h.tgid = p.pid;
    h.ts_ns = ts_ns;
    h.cgroup_id = p.cgroup_id;
    h.process_key = p.key;
    return h;
  }

  // A freed id's slot is reused, as the allocator reuses freed memory.
  // Where a queue's write index lives: amd_queue_t.write_dispatch_id for
  // compute, the ring's write pointer word otherwise.
  static uint64_t WritePtr(const Process& p, const Queue& q) {
    const uint64_t ctl = QueueSlot(p, q) + kQueueCtlOffset;
    return q.type == GPUQ_QUEUE_COMPUTE ? ctl + kAmdQueueWritePtrOffset
                                        : ctl + 8;
  }

  static uint64_t QueueSlot(const Process& p, const Queue& q) {
    return ProcessVaBase(p.pid) + q.queue_id * kQueueSlot;
  }

  gpuq_runlist_event RunlistRecord(const size_t* cause_process, uint32_t gpu_id,
                                   uint32_t op, uint32_t cause, uint32_t filter,
                                   int32_t ret, uint32_t queue_id,
                                   uint64_t duration_ns, uint64_t ts_ns) {
    gpuq_runlist_event e;
    std::memset(&e, 0, sizeof(e));
    const uint64_t ts = ts_ns != 0 ? AdvanceTo(ts_ns) : Tick();
    if (cause_process != nullptr) {
      e.hdr = OwnerHeader(GPUQ_EV_RUNLIST, processes_[*cause_process], ts);
    } else {
      e.hdr.type = GPUQ_EV_RUNLIST;
      e.hdr.ts_ns = ts;
    }
    e.gpu_id = gpu_id;
    e.op = op;
    e.cause = cause;
    e.filter = filter;
    e.ret = ret;
    e.queue_id = queue_id;
    e.duration_ns = duration_ns;
    return e;
  }

  gpuq_queue_create_event CreateRecord(const Process& p, const Queue& q,
                                       uint64_t ts_ns) {
    gpuq_queue_create_event e;
    std::memset(&e, 0, sizeof(e));
    e.hdr = OwnerHeader(GPUQ_EV_QUEUE_CREATE, p, ts_ns);
    e.gpu_id = q.gpu_id;
    e.queue_id = q.queue_id;
    e.queue_type = q.type;
    const bool compute = q.type == GPUQ_QUEUE_COMPUTE;
    e.queue_format = compute ? GPUQ_QUEUE_FORMAT_AQL : GPUQ_QUEUE_FORMAT_PM4;
    const uint64_t slot = QueueSlot(p, q);
    const uint64_t ctl = slot + kQueueCtlOffset;
    e.ring_address = slot;
    e.ring_size = compute ? kComputeRingSize : kSdmaRingSize;
    e.write_ptr = WritePtr(p, q);
    e.read_ptr = compute ? ctl + kAmdQueueReadPtrOffset : ctl;
    e.priority = kPriorityNormal;
    e.percentage = kPercentageFull;
    if (compute) {
      // ROCr's amd_queue_t: indexes count AQL packets from 0 at creation.
      e.flags = GPUQ_CREATE_F_ROCR_LAYOUT;
      e.doorbell_handle = ctl + kDoorbellSignalOffset;
      e.write_index_at_create = 0;
    }
    CopyName(e.comm, p.comm);
    return e;
  }

  // The agent writes a cgroup's path just before the first record naming it,
  // so a replay can attribute every event without the host's cgroupfs.
  void EnsureCgroup(uint64_t cgroup_id, uint64_t ts_ns) {
    if (!cgroups_written_.insert(cgroup_id).second) return;
    CgroupPathRecord r;
    std::memset(&r.hdr, 0, sizeof(r.hdr));
    r.hdr.type = GPUQ_EV_CGROUP_PATH;
    r.hdr.ts_ns = ts_ns;
    r.hdr.cgroup_id = cgroup_id;
    auto it = cgroup_paths_.find(cgroup_id);
    r.path = it != cgroup_paths_.end() ? it->second : std::string();
    Emit(r);
    ++summary_.cgroup_paths;
    auto meta = cgroup_metadata_.find(cgroup_id);
    if (meta != cgroup_metadata_.end()) {
      ContainerMetaRecord m;
      m.hdr = r.hdr;
      m.hdr.type = GPUQ_EV_CONTAINER_META;
      m.json = meta->second;
      Emit(m);
    }
  }

  void Emit(const Event& event) {
    if (!ok_) return;
    if (!sink_(event)) {
      ok_ = false;
      return;
    }
    ++summary_.records;
  }

  const EventSink& sink_;
  std::mt19937_64 rng_;
  const uint64_t start_ns_ = kScenarioStartNs;
  uint64_t now_ns_ = kFirstEventNs;
  bool ok_ = true;
  uint64_t live_ = 0;
  std::vector<Process> processes_;
  std::unordered_map<uint64_t, std::string> cgroup_paths_;
  std::unordered_map<uint64_t, std::string> cgroup_metadata_;
  std::unordered_set<uint64_t> cgroups_written_;
  ScenarioSummary summary_;
};

// The kmalloc-2k object number n as a kfd_process pointer.
uint64_t ProcessKey(uint64_t n) {
  return kProcessKeyBase + n * kKfdProcessSlab;
}

}  // namespace

std::string ValidateScaleParams(const ScaleParams& params) {
  if (params.containers < 1 || params.containers > kMaxScaleContainers) {
    return fmt::format("--containers must be in 1..{}, got {}",
                       kMaxScaleContainers, params.containers);
  }
  if (params.queues_per_container < 1 ||
      params.queues_per_container > kMaxQueuesPerProcess) {
    return fmt::format(
        "--queues-per-container must be in 1..{} (KFD's per-process limit), "
        "got {}",
        kMaxQueuesPerProcess, params.queues_per_container);
  }
  if (params.churn > kMaxScaleChurn) {
    return fmt::format("--churn must be at most {}, got {}", kMaxScaleChurn,
                       params.churn);
  }
  return {};
}

bool BuildDefaultScenario(const EventSink& sink, ScenarioSummary* summary) {
  // Fixed seed: the default capture only varies its timestamp jitter, and
  // must not change between runs.
  Emitter em(sink, 1);

  constexpr uint64_t kHostCgroup = 4127;
  constexpr uint64_t kVllmCgroup = 5861;
  constexpr uint64_t kTrainerCgroup = 6342;
  em.DeclareCgroup(kHostCgroup, "/user.slice/user-1000.slice/session-3.scope");
  em.DeclareCgroup(
      kVllmCgroup,
      "/system.slice/docker-"
      "0124dd351391c6c45121cf43714d956032a91aee4fa3fa9ed0cf6b58d62b"
      "9307.scope");
  em.DeclareCgroup(
      kTrainerCgroup,
      "/kubepods.slice/kubepods-burstable.slice/"
      "kubepods-burstable-poddb3c3553_1e98_4725_809e_8f0d53d633e3.slice/"
      "cri-containerd-"
      "f14ff07ef228422ea4392da6401a03c5237022c79a0a5549425e76d43599b9a9."
      "scope");

  ContainerMetadata vllm;
  vllm.name = "vllm";
  vllm.labels = {{"com.example.team", "inference"},
                 {"org.opencontainers.image.title", "vllm-rocm"}};
  vllm.source = "docker-api";
  em.DeclareMetadata(kVllmCgroup, vllm);
  ContainerMetadata trainer_meta;
  trainer_meta.pod = "trainer-0";
  trainer_meta.ns = "ml-train";
  trainer_meta.k8s_container = "trainer";
  trainer_meta.labels = {{"io.kubernetes.pod.name", "trainer-0"},
                         {"io.kubernetes.pod.namespace", "ml-train"},
                         {"io.kubernetes.container.name", "trainer"}};
  trainer_meta.source = "containerd-bundle";
  em.DeclareMetadata(kTrainerCgroup, trainer_meta);

  // Agent start: topology, then the queue it finds in sysfs.
  em.GpuInfos();
  em.GpuInfo(W7900Record());
  const size_t host =
      em.AddProcess(2817, kHostCgroup, ProcessKey(0x21c37), "hipcc_bench");
  const Queue seeded = em.Seed(host, kMi300xNode[1].gpu_id, GPUQ_QUEUE_COMPUTE);

  // The host process opens one more stream, fails a second one, then opens
  // one on the W7900: add_queue_mes returns before the queue is published.
  const Queue host_q1 =
      em.Create(host, kMi300xNode[1].gpu_id, GPUQ_QUEUE_COMPUTE);
  em.CreateFailed(host, kMi300xNode[1].gpu_id, GPUQ_QUEUE_COMPUTE, -12);
  em.Runlist(&host, kW7900GpuId, GPUQ_RUNLIST_MES_ADD, GPUQ_CAUSE_CREATE, 0, 0,
             2, 180 * kUs);
  const Queue host_q2 = em.Create(host, kW7900GpuId, GPUQ_QUEUE_COMPUTE);

  // vLLM tensor-parallel workers start together: their creates interleave.
  // Each opens 4 compute streams, then 2 SDMA engines (ids 0-3, then 4-5).
  std::vector<size_t> workers;
  for (uint32_t i = 0; i < kNumGpus; ++i) {
    workers.push_back(em.AddProcess(31200 + i * 7, kVllmCgroup,
                                    ProcessKey(0x3a410 + i * 5),
                                    "pt_main_thread"));
  }
  std::vector<std::vector<Queue>> compute(kNumGpus);
  for (int step = 0; step < 6; ++step) {
    const uint32_t type = step < 4 ? GPUQ_QUEUE_COMPUTE : GPUQ_QUEUE_SDMA;
    for (uint32_t i = 0; i < kNumGpus; ++i) {
      const Queue q = em.Create(workers[i], kMi300xNode[i].gpu_id, type);
      if (step < 4) compute[i].push_back(q);
    }
  }

  // The trainer pod shares GPU 0.
  const size_t trainer = em.AddProcess(48211, kTrainerCgroup,
                                       ProcessKey(0x5c0e2), "pt_main_thread");
  std::vector<Queue> trainer_queues;
  trainer_queues.push_back(
      em.Create(trainer, kMi300xNode[0].gpu_id, GPUQ_QUEUE_COMPUTE));
  trainer_queues.push_back(
      em.Create(trainer, kMi300xNode[0].gpu_id, GPUQ_QUEUE_COMPUTE));
  trainer_queues.push_back(
      em.Create(trainer, kMi300xNode[0].gpu_id, GPUQ_QUEUE_SDMA));

  // Sampler rounds: every ROCr (compute) queue, one read 10 us after the
  // other, in the same order each round. vLLM queue q of any worker has
  // written 1000, 4000, 7000 x (q+1) packets at rounds 0, 1, 2 and has q
  // of them pending.
  auto vllm_at = [](uint64_t round, uint32_t q) {
    const uint64_t write = uint64_t{1000 + 3000 * round} * (q + 1);
    return Indexes{write, write - q};
  };
  struct Sampled {
    Queue queue;
    Indexes idx;
    bool readable;
  };
  auto round = [&em](uint64_t at_ns, const std::vector<Sampled>& samples) {
    uint64_t ts = at_ns;
    for (const Sampled& s : samples) {
      em.Sample(s.queue, ts, s.idx, s.readable);
      ts += 10 * kUs;
    }
  };
  std::vector<Sampled> round0 = {{host_q1, {100, 95}, true},
                                 {host_q2, {50, 50}, true}};
  for (uint32_t i = 0; i < kNumGpus; ++i) {
    for (uint32_t q = 0; q < 4; ++q) {
      round0.push_back({compute[i][q], vllm_at(0, q), true});
    }
  }
  round0.push_back({trainer_queues[0], {500, 500}, true});
  round0.push_back({trainer_queues[1], {800, 800}, true});
  round(kScenarioStartNs + 1000 * kMs, round0);
  // Their knobs, read with their first samples: the trainer caps its
  // streams at two hardware queues, vLLM's workers name their GPUs.
  em.Knobs(host, kScenarioStartNs + 1000 * kMs, {"HOME=/root"});
  for (uint32_t i = 0; i < kNumGpus; ++i) {
    em.Knobs(workers[i], kScenarioStartNs + 1000 * kMs,
             {"HIP_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "VLLM_USE_V1=1"});
  }
  em.Knobs(trainer, kScenarioStartNs + 1000 * kMs, {"GPU_MAX_HW_QUEUES=2"});

  // Each worker destroys its last compute stream (queue id 3). On GPU 8 the
  // scheduler hangs: the preempting unmap times out after amdkfd's 9 s
  // (-ETIME) and execute_queues_cpsch skips the map.
  for (uint32_t i = 0; i < kNumGpus; ++i) {
    if (i == kNumGpus - 1) {
      const uint64_t hang = 9000412345ull;
      em.Runlist(&workers[i], kMi300xNode[i].gpu_id, GPUQ_RUNLIST_UNMAP,
                 GPUQ_CAUSE_DESTROY, kFilterDynamic, -62, 0, hang,
                 em.now() + hang);
    }
    em.Destroy(compute[i][3], GPUQ_DESTROY_IOCTL);
  }

  // TTM evicts the trainer on GPU 0 (vLLM needs the VRAM): the runlist is
  // preempted and remapped without its queues; 150 ms later they are back.
  // GPU 0's maps read the runlist they leave (the BTF tiers do): a
  // partition whose runlist KFD holds to 4 CP queues and 8 processes. The
  // restore brings the trainer's 2 compute queues back beside vLLM's 3:
  // oversubscribed (HWS time-slices them) until the trainer's teardown.
  const uint32_t gpu0 = kMi300xNode[0].gpu_id;
  em.Runlist(&trainer, gpu0, GPUQ_RUNLIST_UNMAP, GPUQ_CAUSE_EVICT,
             kFilterDynamic, 0, 0, 310 * kUs);
  em.MapRead(&trainer, gpu0, GPUQ_CAUSE_EVICT, 95 * kUs, 0,
             RunlistRead{2, 3, 8, 4});
  const uint64_t ttm_evict = em.now() + kMs;
  em.Eviction(trainer, gpu0, GPUQ_EVICTION_EVICT, GPUQ_TRIGGER_TTM, 420 * kUs,
              3, ttm_evict);
  em.Runlist(&trainer, gpu0, GPUQ_RUNLIST_UNMAP, GPUQ_CAUSE_RESTORE,
             kFilterDynamic, 0, 0, 120 * kUs,
             ttm_evict + 150 * kMs - 200 * kUs);
  em.MapRead(&trainer, gpu0, GPUQ_CAUSE_RESTORE, 90 * kUs,
             ttm_evict + 150 * kMs - 100 * kUs, RunlistRead{2, 5, 8, 4});
  em.Eviction(trainer, gpu0, GPUQ_EVICTION_RESTORE, GPUQ_TRIGGER_UNKNOWN,
              260 * kUs, 3, ttm_evict + 150 * kMs);

  // The trainer exits holding its queues: notifier_release first.
  em.Exit(trainer);

  // Round 1: the trainer's memory is gone (unreadable); vLLM's queue 3s are.
  std::vector<Sampled> round1 = {{host_q1, {200, 195}, true},
                                 {host_q2, {60, 60}, true}};
  for (uint32_t i = 0; i < kNumGpus; ++i) {
    for (uint32_t q = 0; q < 3; ++q) {
      round1.push_back({compute[i][q], vllm_at(1, q), true});
    }
  }
  round1.push_back({trainer_queues[0], {0, 0}, false});
  round1.push_back({trainer_queues[1], {0, 0}, false});
  round(kScenarioStartNs + 11000 * kMs, round1);

  // The kfd_process_wq kworker: process_termination_cpsch preempts once,
  // then the queues are freed one by one.
  em.Runlist(&trainer, gpu0, GPUQ_RUNLIST_UNMAP, GPUQ_CAUSE_TERMINATE,
             kFilterDynamic, 0, 0, 140 * kUs);
  em.MapRead(&trainer, gpu0, GPUQ_CAUSE_TERMINATE, 85 * kUs, 0,
             RunlistRead{1, 3, 8, 4});
  for (const Queue& q : trainer_queues) {
    em.Destroy(q, GPUQ_DESTROY_PROCESS_EXIT);
  }

  // Doorbell poll 1 (--doorbells=uprobe): worker 0's queue 0.
  const Queue& w0q0 = compute[0][0];
  const Queue& w0q1 = compute[0][1];
  em.DoorbellCount(workers[0], em.DoorbellHandle(w0q0), &w0q0,
                   kScenarioStartNs + 11500 * kMs, 880, 20, 0, 0);

  // GPU 8 is reset after the hang: its processes are evicted (suspend), the
  // whole runlist is unmapped and mapped again by the reset path (no process
  // caused it), and worker 7 is restored 2.3 s after its eviction.
  const uint32_t gpu7 = kMi300xNode[kNumGpus - 1].gpu_id;
  const uint64_t suspend = kScenarioStartNs + 11600 * kMs;
  em.Eviction(workers[kNumGpus - 1], gpu7, GPUQ_EVICTION_EVICT,
              GPUQ_TRIGGER_SUSPEND, 35 * kUs, 5, suspend);
  em.Runlist(nullptr, gpu7, GPUQ_RUNLIST_UNMAP, GPUQ_CAUSE_UNKNOWN, kFilterAll,
             0, 0, 2100 * kUs);
  em.Runlist(nullptr, gpu7, GPUQ_RUNLIST_MAP, GPUQ_CAUSE_UNKNOWN, 0, 0, 0,
             400 * kUs, suspend + 2200 * kMs);
  em.Eviction(workers[kNumGpus - 1], gpu7, GPUQ_EVICTION_RESTORE,
              GPUQ_TRIGGER_UNKNOWN, 610 * kUs, 5, suspend + 2300 * kMs);

  // A userptr invalidation evicts the host process on the W7900: MES
  // removes its queue and adds it back 40 ms later.
  const uint64_t userptr = kScenarioStartNs + 14000 * kMs;
  em.Runlist(&host, kW7900GpuId, GPUQ_RUNLIST_MES_REMOVE, GPUQ_CAUSE_EVICT, 0,
             0, 2, 60 * kUs, userptr - 100 * kUs);
  em.Eviction(host, kW7900GpuId, GPUQ_EVICTION_EVICT, GPUQ_TRIGGER_USERPTR,
              90 * kUs, 1, userptr);
  em.Runlist(&host, kW7900GpuId, GPUQ_RUNLIST_MES_ADD, GPUQ_CAUSE_RESTORE, 0, 0,
             2, 150 * kUs, userptr + 40 * kMs - 100 * kUs);
  em.Eviction(host, kW7900GpuId, GPUQ_EVICTION_RESTORE, GPUQ_TRIGGER_UNKNOWN,
              190 * kUs, 1, userptr + 40 * kMs);

  // Round 2, 4 s after round 1: the rates --once shows come from these two.
  std::vector<Sampled> round2 = {{host_q1, {300, 295}, true},
                                 {host_q2, {90, 90}, true}};
  for (uint32_t i = 0; i < kNumGpus; ++i) {
    for (uint32_t q = 0; q < 3; ++q) {
      round2.push_back({compute[i][q], vllm_at(2, q), true});
    }
  }
  round(kScenarioStartNs + 15000 * kMs, round2);

  // Doorbell poll 2: worker 0's queues 0 and 1, and a doorbell of the host's
  // seeded queue, whose handle the agent never learned (gpu 0: unknown).
  const uint64_t poll2 = kScenarioStartNs + 15500 * kMs;
  em.DoorbellCount(workers[0], em.DoorbellHandle(w0q0), &w0q0, poll2, 2050, 48,
                   0, 2);
  em.DoorbellCount(workers[0], em.DoorbellHandle(w0q1), &w0q1, poll2 + 10 * kUs,
                   400, 0, 0, 0);
  em.DoorbellCount(host, kHostSeededDoorbell, nullptr, poll2 + 20 * kUs, 60, 0,
                   10, 0);

  // The host process releases the queue the agent only knew from sysfs.
  em.Destroy(seeded, GPUQ_DESTROY_IOCTL, GPUQ_DESTROY_F_UNTRACKED);

  // Last, the host process opens a PM4 compute queue on GPU 23710 with a
  // runtime of its own (the sampler cannot count it: not_rocr) and fences it
  // to CUs 0-151 of the MI300X's 304. Live at the end, it gives the
  // dashboard's CU-mask and unsampled-queue panels a series.
  const uint64_t pm4_at = kScenarioStartNs + 15600 * kMs;
  const Queue host_pm4 =
      em.CreatePm4Compute(host, kMi300xNode[1].gpu_id, pm4_at);
  em.CuMask(host_pm4, 320, 152, pm4_at + kMs);

  if (summary != nullptr) *summary = em.Finish();
  return em.ok();
}

bool BuildScaleScenario(const ScaleParams& params, const EventSink& sink,
                        ScenarioSummary* summary) {
  Emitter em(sink, params.seed);
  // Identities derived from the seed, so two seeds look like two hosts.
  const uint64_t key_offset = em.rng()() % 0x100000;
  const uint64_t cgroup_base = 8000 + em.rng()() % 4096;

  em.GpuInfos();
  std::vector<Queue> live;
  live.reserve(uint64_t{params.containers} * params.queues_per_container);
  for (uint32_t c = 0; c < params.containers; ++c) {
    // Docker creates a few cgroups per container: ids are sparse.
    const uint64_t cgroup_id = cgroup_base + uint64_t{c} * 3;
    em.DeclareCgroup(cgroup_id, fmt::format("/system.slice/docker-{}.scope",
                                            Hex64(em.rng())));
    const size_t p =
        em.AddProcess(100000 + c, cgroup_id, ProcessKey(key_offset + c + 1),
                      "pt_main_thread");
    const uint32_t gpu_id = kMi300xNode[c % kNumGpus].gpu_id;
    for (uint32_t j = 0; j < params.queues_per_container && em.ok(); ++j) {
      // Two compute streams for each SDMA engine.
      const uint32_t type = j % 3 == 2 ? GPUQ_QUEUE_SDMA : GPUQ_QUEUE_COMPUTE;
      live.push_back(em.Create(p, gpu_id, type));
    }
  }

  // Churn: a random live queue goes, its process opens a new one of the
  // same type on the same GPU (KFD hands back the lowest free id).
  for (uint64_t k = 0; k < params.churn && em.ok(); ++k) {
    const size_t victim = em.rng()() % live.size();
    const Queue old = live[victim];
    em.Destroy(old, GPUQ_DESTROY_IOCTL);
    live[victim] = em.Create(old.process, old.gpu_id, old.type);
  }

  if (summary != nullptr) *summary = em.Finish();
  return em.ok();
}

std::vector<Event> ScaleScenarioEvents(const ScaleParams& params,
                                       ScenarioSummary* summary) {
  std::vector<Event> events;
  BuildScaleScenario(
      params,
      [&events](const Event& e) {
        events.push_back(e);
        return true;
      },
      summary);
  return events;
}

namespace {

constexpr uint64_t kS = 1000 * kMs;

// A Docker container (systemd driver) with a runtime name: its 64-hex id
// comes from splitmix64 of `salt`, so it is fixed and distinct.
void DeclareDockerContainer(Emitter* em, uint64_t cgroup_id,
                            const std::string& name, uint64_t salt) {
  std::string id;
  for (uint64_t i = 0; i < 4; ++i) id += fmt::format("{:016x}", Mix(salt + i));
  em->DeclareCgroup(cgroup_id,
                    fmt::format("/system.slice/docker-{}.scope", id));
  ContainerMetadata m;
  m.name = name;
  m.source = "docker-api";
  em->DeclareMetadata(cgroup_id, m);
}

// One queue's sampler reads at fixed times (all queues of a round share the
// round's timestamp, so durations stay whole seconds).
struct Feed {
  Queue queue;
  uint64_t per_s;    // packets written per second
  uint64_t pending;  // written but not consumed at each read
};

void SampleRound(Emitter* em, const std::vector<Feed>& feeds, uint64_t at_ns,
                 uint64_t seconds_fed, uint64_t extra = 0) {
  for (const Feed& f : feeds) {
    const uint64_t write = f.per_s * seconds_fed + extra;
    em->Sample(f.queue, at_ns, Indexes{write, write - f.pending}, true);
  }
}

}  // namespace

// Case-A: a CNN training run, one compute queue on one GPU for 121 s,
// 127,099 packets (examples/README.md, "Report scenarios").
bool BuildCnnScenario(const EventSink& sink, ScenarioSummary* summary) {
  Emitter em(sink, 2);
  const uint64_t t0 = kScenarioStartNs;
  constexpr uint64_t kCgroup = 7101;
  DeclareDockerContainer(&em, kCgroup, "cnn", 0xc11);
  em.GpuInfo(Mi300xRecord(0, t0));
  const uint32_t gpu = kMi300xNode[0].gpu_id;
  const size_t p = em.AddProcess(6101, kCgroup, ProcessKey(0x61010), "python3");
  // The kernel's order: the create's map, then its create record.
  em.Runlist(&p, gpu, GPUQ_RUNLIST_MAP, GPUQ_CAUSE_CREATE, 0, 0, 0, 80 * kUs,
             t0 + 500 * kMs);
  const Queue q = em.Create(p, gpu, GPUQ_QUEUE_COMPUTE, t0 + 500 * kMs);
  // 1050 packets/s for 120 s, then 1099 in the last second: 127,099.
  for (uint64_t k = 1; k <= 121; ++k) {
    const uint64_t write = k <= 120 ? 1050 * k : 126000 + 1099;
    em.Sample(q, t0 + k * kS, Indexes{write, k < 121 ? write - 2 : write},
              true);
  }
  const uint64_t end = t0 + 121 * kS;
  em.Runlist(&p, gpu, GPUQ_RUNLIST_UNMAP, GPUQ_CAUSE_DESTROY, kFilterDynamic, 0,
             0, 200 * kUs, end);
  em.Runlist(&p, gpu, GPUQ_RUNLIST_MAP, GPUQ_CAUSE_DESTROY, 0, 0, 0, 70 * kUs,
             end);
  em.Destroy(q, GPUQ_DESTROY_IOCTL, 0, end);
  em.Exit(p, end);
  if (summary != nullptr) *summary = em.Finish();
  return em.ok();
}

// Case-B: a Transformer on one GPU: a main compute stream, an SDMA queue,
// and a second compute stream from 30 s to 90.5 s; 261,809 packets.
bool BuildTransformerScenario(const EventSink& sink, ScenarioSummary* summary) {
  Emitter em(sink, 3);
  const uint64_t t0 = kScenarioStartNs;
  constexpr uint64_t kCgroup = 7201;
  DeclareDockerContainer(&em, kCgroup, "transformer", 0x7f3);
  em.GpuInfo(Mi300xRecord(0, t0));
  const uint32_t gpu = kMi300xNode[0].gpu_id;
  const size_t p = em.AddProcess(6201, kCgroup, ProcessKey(0x62010), "python3");
  auto create = [&](uint32_t type, uint64_t at) {
    em.Runlist(&p, gpu, GPUQ_RUNLIST_MAP, GPUQ_CAUSE_CREATE, 0, 0, 0, 80 * kUs,
               at);
    return em.Create(p, gpu, type, at);
  };
  const Queue main = create(GPUQ_QUEUE_COMPUTE, t0 + 500 * kMs);
  const Queue sdma = create(GPUQ_QUEUE_SDMA, t0 + 600 * kMs);
  Queue second{};
  for (uint64_t k = 1; k <= 121; ++k) {
    const uint64_t at = t0 + k * kS;
    // Main stream: 2000/s, 3 pending; 2009 in the last second.
    const uint64_t write = k <= 120 ? 2000 * k : 240000 + 2009;
    em.Sample(main, at, Indexes{write, write - 3}, true);
    // Second stream: 330/s over its 60 s, 1 pending.
    if (k >= 31 && k <= 90) {
      SampleRound(&em, {{second, 330, 1}}, at, k - 30);
    }
    if (k == 30) second = create(GPUQ_QUEUE_COMPUTE, at);
    if (k == 90) {
      const uint64_t gone = at + 500 * kMs;
      em.Runlist(&p, gpu, GPUQ_RUNLIST_UNMAP, GPUQ_CAUSE_DESTROY,
                 kFilterDynamic, 0, 0, 300 * kUs, gone);
      em.Runlist(&p, gpu, GPUQ_RUNLIST_MAP, GPUQ_CAUSE_DESTROY, 0, 0, 0,
                 90 * kUs, gone);
      em.Destroy(second, GPUQ_DESTROY_IOCTL, 0, gone);
    }
  }
  // The process exits with its queues: the kworker preempts once, then
  // frees them.
  const uint64_t end = t0 + 121 * kS;
  em.Exit(p, end);
  em.Runlist(&p, gpu, GPUQ_RUNLIST_UNMAP, GPUQ_CAUSE_TERMINATE, kFilterDynamic,
             0, 0, 400 * kUs, end);
  em.Destroy(main, GPUQ_DESTROY_PROCESS_EXIT, 0, end);
  em.Destroy(sdma, GPUQ_DESTROY_PROCESS_EXIT, 0, end);
  if (summary != nullptr) *summary = em.Finish();
  return em.ok();
}

// DeepSeek-like inference over 8 GPUs: one worker per GPU, each with two
// compute queues and one SDMA queue, for 60 s; queues still live at the end.
bool BuildDeepseek8Scenario(const EventSink& sink, ScenarioSummary* summary) {
  Emitter em(sink, 4);
  const uint64_t t0 = kScenarioStartNs;
  constexpr uint64_t kCgroup = 7301;
  DeclareDockerContainer(&em, kCgroup, "deepseek", 0xd5e);
  em.GpuInfos();
  std::vector<size_t> workers;
  for (uint32_t i = 0; i < kNumGpus; ++i) {
    workers.push_back(
        em.AddProcess(6301 + i, kCgroup, ProcessKey(0x63010 + i), "python3"));
  }
  std::vector<Feed> feeds;
  const uint32_t types[] = {GPUQ_QUEUE_COMPUTE, GPUQ_QUEUE_COMPUTE,
                            GPUQ_QUEUE_SDMA};
  for (uint64_t step = 0; step < 3; ++step) {
    for (uint32_t i = 0; i < kNumGpus; ++i) {
      const uint64_t at = t0 + (step + 1) * 100 * kMs + i * 10 * kMs;
      const uint32_t gpu = kMi300xNode[i].gpu_id;
      em.Runlist(&workers[i], gpu, GPUQ_RUNLIST_MAP, GPUQ_CAUSE_CREATE, 0, 0, 0,
                 100 * kUs, at);
      const Queue q = em.Create(workers[i], gpu, types[step], at);
      // Queue 0: 1000/s with 2 pending; queue 1: 500/s with 1 pending.
      if (step == 0) feeds.push_back({q, 1000, 2});
      if (step == 1) feeds.push_back({q, 500, 1});
    }
  }
  for (uint64_t k = 1; k <= 60; ++k) SampleRound(&em, feeds, t0 + k * kS, k);
  if (summary != nullptr) *summary = em.Finish();
  return em.ok();
}

// An 8-GPU MI300X node in CPX mode (64 KFD nodes): vLLM with one worker per
// partition of GPUs 0 and 1, each with a compute queue (100 packets/s, 1
// pending) and an SDMA queue; a batch process on partitions 0-3 of GPU 2,
// a compute queue on each (50/s, none pending), for 10 s. Per physical GPU:
// 8 compute, 8 SDMA, 8 processes, 800/s, 8 pending on GPUs 0 and 1; 4
// compute, 1 process, 200/s on GPU 2; nothing on GPUs 3-7.
bool BuildCpxScenario(const EventSink& sink, ScenarioSummary* summary) {
  Emitter em(sink, 8);
  const uint64_t t0 = kScenarioStartNs;
  constexpr uint64_t kVllmCgroup = 7701;
  constexpr uint64_t kBatchCgroup = 7702;
  DeclareDockerContainer(&em, kVllmCgroup, "vllm-cpx", 0xc9);
  DeclareDockerContainer(&em, kBatchCgroup, "batch", 0xba);
  std::set<uint32_t> ids;
  for (uint32_t i = 0; i < kNumGpus; ++i) {
    for (uint32_t p = 0; p < kCpxPartitions; ++p) {
      em.GpuInfo(Mi300xCpxRecord(i, p, t0));
      ids.insert(CpxGpuId(i, p));
    }
  }
  if (ids.size() != kNumGpus * kCpxPartitions) return false;
  std::vector<Feed> feeds;
  for (uint32_t i = 0; i < 2; ++i) {
    for (uint32_t p = 0; p < kCpxPartitions; ++p) {
      const uint32_t n = i * kCpxPartitions + p;
      const size_t w = em.AddProcess(7601 + n, kVllmCgroup,
                                     ProcessKey(0x76010 + n), "python3");
      const uint64_t at = t0 + 100 * kMs + n * 10 * kMs;
      const Queue q = em.Create(w, CpxGpuId(i, p), GPUQ_QUEUE_COMPUTE, at);
      em.Create(w, CpxGpuId(i, p), GPUQ_QUEUE_SDMA, at + kMs);
      feeds.push_back({q, 100, 1});
    }
  }
  const size_t batch =
      em.AddProcess(7690, kBatchCgroup, ProcessKey(0x76900), "python3");
  for (uint32_t p = 0; p < 4; ++p) {
    const Queue q = em.Create(batch, CpxGpuId(2, p), GPUQ_QUEUE_COMPUTE,
                              t0 + 500 * kMs + p * 10 * kMs);
    feeds.push_back({q, 50, 0});
  }
  for (uint64_t k = 1; k <= 10; ++k) SampleRound(&em, feeds, t0 + k * kS, k);
  if (summary != nullptr) *summary = em.Finish();
  return em.ok();
}

// Two processes share GPU 11437 for 30 s: a latency-sensitive ResNet-18
// (10 req/s, 60 packets each) beside a ResNet-50 batch job. ResNet-18's
// queue updates and ResNet-50's TTM eviction preempt the runlist.
bool BuildSharedGpuScenario(const EventSink& sink, ScenarioSummary* summary) {
  Emitter em(sink, 5);
  const uint64_t t0 = kScenarioStartNs;
  constexpr uint64_t kResnet18Cgroup = 7401;
  constexpr uint64_t kResnet50Cgroup = 7402;
  DeclareDockerContainer(&em, kResnet18Cgroup, "resnet18", 0x18);
  DeclareDockerContainer(&em, kResnet50Cgroup, "resnet50", 0x50);
  em.GpuInfo(Mi300xRecord(0, t0));
  const uint32_t gpu = kMi300xNode[0].gpu_id;
  const size_t r50 =
      em.AddProcess(6402, kResnet50Cgroup, ProcessKey(0x64020), "python3");
  const size_t r18 =
      em.AddProcess(6401, kResnet18Cgroup, ProcessKey(0x64010), "python3");
  em.Runlist(&r50, gpu, GPUQ_RUNLIST_MAP, GPUQ_CAUSE_CREATE, 0, 0, 0, 80 * kUs,
             t0 + 100 * kMs);
  const Queue q50 = em.Create(r50, gpu, GPUQ_QUEUE_COMPUTE, t0 + 100 * kMs);
  em.Runlist(&r18, gpu, GPUQ_RUNLIST_MAP, GPUQ_CAUSE_CREATE, 0, 0, 0, 80 * kUs,
             t0 + 200 * kMs);
  const Queue q18 = em.Create(r18, gpu, GPUQ_QUEUE_COMPUTE, t0 + 200 * kMs);
  const std::vector<Feed> feeds = {{q18, 600, 0}, {q50, 4000, 64}};
  for (uint64_t k = 1; k <= 30; ++k) {
    const uint64_t at = t0 + k * kS;
    SampleRound(&em, feeds, at, k);
    if (k % 5 == 0 && k <= 25) {
      // ResNet-18 updates its queue (CU mask / priority): unmap + map.
      const uint64_t upd = at + 500 * kMs;
      em.Runlist(&r18, gpu, GPUQ_RUNLIST_UNMAP, GPUQ_CAUSE_UPDATE,
                 kFilterDynamic, 0, 0, (k / 5) * 100 * kUs, upd);
      em.Runlist(&r18, gpu, GPUQ_RUNLIST_MAP, GPUQ_CAUSE_UPDATE, 0, 0, 0,
                 50 * kUs, upd);
    }
    if (k == 12) {
      // ResNet-18's allocations push ResNet-50's buffers out of VRAM.
      const uint64_t evict = at + 500 * kMs;
      em.Runlist(&r50, gpu, GPUQ_RUNLIST_UNMAP, GPUQ_CAUSE_EVICT,
                 kFilterDynamic, 0, 0, 250 * kUs, evict);
      em.Runlist(&r50, gpu, GPUQ_RUNLIST_MAP, GPUQ_CAUSE_EVICT, 0, 0, 0,
                 60 * kUs, evict);
      em.Eviction(r50, gpu, GPUQ_EVICTION_EVICT, GPUQ_TRIGGER_TTM, 300 * kUs, 1,
                  evict);
      const uint64_t restore = at + 700 * kMs;
      em.Runlist(&r50, gpu, GPUQ_RUNLIST_UNMAP, GPUQ_CAUSE_RESTORE,
                 kFilterDynamic, 0, 0, 150 * kUs, restore);
      em.Runlist(&r50, gpu, GPUQ_RUNLIST_MAP, GPUQ_CAUSE_RESTORE, 0, 0, 0,
                 70 * kUs, restore);
      em.Eviction(r50, gpu, GPUQ_EVICTION_RESTORE, GPUQ_TRIGGER_UNKNOWN,
                  200 * kUs, 1, restore);
    }
  }
  if (summary != nullptr) *summary = em.Finish();
  return em.ok();
}

// The users' experiment (issue: who gets preempted, for how long, and
// why): a latency-sensitive container ("latency", one high-priority compute
// queue, 100 packets/s) beside a batch container ("batch", two streams,
// 4000 packets/s, the first fenced to half of the CUs by a CU mask) on one
// MI300X GPU for 30 s. The batch job makes a third
// stream from +10 s to +20 s, and recycles its second stream at +5, +15
// and +25 s. With `cp_queue_slots` 2 the runlist holds more compute queues
// than the scheduler maps at once from the latency queue's create on;
// with 24 it always fits: the two captures compare the two runs.
bool BuildPairScenario(const EventSink& sink, ScenarioSummary* summary,
                       uint32_t cp_queue_slots) {
  Emitter em(sink, 6);
  const uint64_t t0 = kScenarioStartNs;
  constexpr uint64_t kLatencyCgroup = 7501;
  constexpr uint64_t kBatchCgroup = 7502;
  DeclareDockerContainer(&em, kLatencyCgroup, "latency", 0x75);
  DeclareDockerContainer(&em, kBatchCgroup, "batch", 0x76);
  em.GpuInfo(Mi300xRecord(0, t0));
  const uint32_t gpu = kMi300xNode[0].gpu_id;
  const size_t batch =
      em.AddProcess(7602, kBatchCgroup, ProcessKey(0x76020), "python3");
  const size_t lat =
      em.AddProcess(7601, kLatencyCgroup, ProcessKey(0x76010), "python3");
  RunlistRead rl{0, 0, 8, cp_queue_slots};
  // amdkfd: a create or destroy is an unmap of the runlist up, then a map
  // of the new one (the first map has nothing to unmap).
  auto remap = [&](const size_t* who, uint32_t cause, uint64_t at, bool unmap) {
    if (unmap) {
      em.Runlist(who, gpu, GPUQ_RUNLIST_UNMAP, cause, kFilterDynamic, 0, 0,
                 200 * kUs, at);
    }
    em.MapRead(who, gpu, cause, 80 * kUs, at + kMs, rl);
  };
  // Records in the kernel's order: an operation's runlist records (written
  // at their returns) come before its own create or destroy record.
  rl.processes = 1;
  rl.compute_queues = 1;
  remap(&batch, GPUQ_CAUSE_CREATE, t0 + 100 * kMs, false);
  const Queue b1 =
      em.Create(batch, gpu, GPUQ_QUEUE_COMPUTE, t0 + 100 * kMs + 2 * kMs);
  // hipExtStreamCreateWithCUMask: the set is an update (unmap, map).
  remap(&batch, GPUQ_CAUSE_UPDATE, t0 + 110 * kMs, true);
  em.CuMask(b1, 320, 152, t0 + 110 * kMs + 2 * kMs);
  rl.compute_queues = 2;
  remap(&batch, GPUQ_CAUSE_CREATE, t0 + 150 * kMs, true);
  Queue b2 =
      em.Create(batch, gpu, GPUQ_QUEUE_COMPUTE, t0 + 150 * kMs + 2 * kMs);
  rl.processes = 2;
  rl.compute_queues = 3;
  remap(&lat, GPUQ_CAUSE_CREATE, t0 + 200 * kMs, true);
  const Queue l1 =
      em.Create(lat, gpu, GPUQ_QUEUE_COMPUTE, t0 + 200 * kMs + 2 * kMs,
                15 /* HIP's high stream priority */);
  std::optional<Queue> b3;
  uint64_t recycled = 0;  // b2's packets before its last recycle
  for (uint64_t k = 1; k <= 30; ++k) {
    const uint64_t at = t0 + k * kS;
    SampleRound(&em, {{l1, 100, 0}, {b1, 2000, 32}}, at, k);
    em.Sample(b2, at, Indexes{2000 * k - recycled, 2000 * k - recycled - 32},
              true);
    if (b3) em.Sample(*b3, at, Indexes{1000 * (k - 10), 1000 * (k - 10)}, true);
    const uint64_t half = at + 500 * kMs;
    if (k % 10 == 5) {
      // The batch job recycles its second stream: destroy, then create.
      --rl.compute_queues;
      remap(&batch, GPUQ_CAUSE_DESTROY, half, true);
      em.Destroy(b2, GPUQ_DESTROY_IOCTL, 0, half + 2 * kMs);
      ++rl.compute_queues;
      remap(&batch, GPUQ_CAUSE_CREATE, half + 10 * kMs, true);
      b2 = em.Create(batch, gpu, GPUQ_QUEUE_COMPUTE, half + 12 * kMs);
      recycled = 2000 * k;
    }
    if (k == 10) {
      ++rl.compute_queues;
      remap(&batch, GPUQ_CAUSE_CREATE, half, true);
      b3 = em.Create(batch, gpu, GPUQ_QUEUE_COMPUTE, half + 2 * kMs);
    }
    if (k == 20) {
      --rl.compute_queues;
      remap(&batch, GPUQ_CAUSE_DESTROY, half, true);
      em.Destroy(*b3, GPUQ_DESTROY_IOCTL, 0, half + 2 * kMs);
      b3.reset();
    }
  }
  if (summary != nullptr) *summary = em.Finish();
  return em.ok();
}

bool BuildPairOversubscribedScenario(const EventSink& sink,
                                     ScenarioSummary* summary) {
  return BuildPairScenario(sink, summary, 2);
}

bool BuildPairFitsScenario(const EventSink& sink, ScenarioSummary* summary) {
  return BuildPairScenario(sink, summary, 24);
}

const std::vector<std::string>& NamedScenarios() {
  static const std::vector<std::string> names = {
      "default",    "cnn",       "transformer",         "deepseek8",
      "shared-gpu", "pair-fits", "pair-oversubscribed", "cpx"};
  return names;
}

bool BuildNamedScenario(const std::string& name, const EventSink& sink,
                        ScenarioSummary* summary) {
  if (name == "default") return BuildDefaultScenario(sink, summary);
  if (name == "cnn") return BuildCnnScenario(sink, summary);
  if (name == "transformer") return BuildTransformerScenario(sink, summary);
  if (name == "deepseek8") return BuildDeepseek8Scenario(sink, summary);
  if (name == "shared-gpu") return BuildSharedGpuScenario(sink, summary);
  if (name == "pair-oversubscribed") {
    return BuildPairOversubscribedScenario(sink, summary);
  }
  if (name == "pair-fits") return BuildPairFitsScenario(sink, summary);
  if (name == "cpx") return BuildCpxScenario(sink, summary);
  return false;
}

}  // namespace gpuq
