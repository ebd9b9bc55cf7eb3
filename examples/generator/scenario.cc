#include "scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "resolver/container_metadata_json.h"

namespace gpuq {
namespace {

constexpr uint64_t kMs = 1000000;

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
  r.num_xcc = 8;
  CopyName(r.name, "gfx942");
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
    Emit(e);
    ++summary_.creates;
    ++summary_.seeded_creates;
    ++live_;
    return q;
  }

  Queue Create(size_t process, uint32_t gpu_id, uint32_t type) {
    Process& p = processes_[process];
    const Queue q{process, AllocQueueId(p), gpu_id, type};
    Emit(CreateRecord(p, q, Tick()));
    ++summary_.creates;
    ++live_;
    return q;
  }

  void Destroy(const Queue& q, uint32_t reason, uint32_t flags = 0) {
    Process& p = processes_[q.process];
    gpuq_queue_destroy_event e;
    std::memset(&e, 0, sizeof(e));
    e.hdr = OwnerHeader(GPUQ_EV_QUEUE_DESTROY, p, Tick());
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

  void Exit(size_t process) {
    const Process& p = processes_[process];
    gpuq_process_exit_event e;
    std::memset(&e, 0, sizeof(e));
    e.hdr = OwnerHeader(GPUQ_EV_PROCESS_EXIT, p, Tick());
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
    // A freed id's slot is reused, as the allocator reuses freed memory.
    const uint64_t slot = ProcessVaBase(p.pid) + q.queue_id * kQueueSlot;
    const uint64_t ctl = slot + kQueueCtlOffset;
    e.ring_address = slot;
    e.ring_size = compute ? kComputeRingSize : kSdmaRingSize;
    e.write_ptr = compute ? ctl + kAmdQueueWritePtrOffset : ctl + 8;
    e.read_ptr = compute ? ctl + kAmdQueueReadPtrOffset : ctl;
    e.priority = kPriorityNormal;
    e.percentage = kPercentageFull;
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
  const size_t host =
      em.AddProcess(2817, kHostCgroup, ProcessKey(0x21c37), "hipcc_bench");
  const Queue seeded = em.Seed(host, kMi300xNode[1].gpu_id, GPUQ_QUEUE_COMPUTE);

  // The host process opens one more stream, then fails a second one.
  em.Create(host, kMi300xNode[1].gpu_id, GPUQ_QUEUE_COMPUTE);
  em.CreateFailed(host, kMi300xNode[1].gpu_id, GPUQ_QUEUE_COMPUTE, -12);

  // vLLM tensor-parallel workers start together: their creates interleave.
  // Each opens 4 compute streams, then 2 SDMA engines (ids 0-3, then 4-5).
  std::vector<size_t> workers;
  for (uint32_t i = 0; i < kNumGpus; ++i) {
    workers.push_back(em.AddProcess(31200 + i * 7, kVllmCgroup,
                                    ProcessKey(0x3a410 + i * 5),
                                    "pt_main_thread"));
  }
  std::vector<Queue> last_compute(kNumGpus);
  for (int step = 0; step < 6; ++step) {
    const uint32_t type = step < 4 ? GPUQ_QUEUE_COMPUTE : GPUQ_QUEUE_SDMA;
    for (uint32_t i = 0; i < kNumGpus; ++i) {
      const Queue q = em.Create(workers[i], kMi300xNode[i].gpu_id, type);
      if (step == 3) last_compute[i] = q;
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

  // Each worker destroys its last compute stream (queue id 3).
  for (uint32_t i = 0; i < kNumGpus; ++i) {
    em.Destroy(last_compute[i], GPUQ_DESTROY_IOCTL);
  }

  // The trainer exits holding its queues: notifier_release first, then the
  // kfd_process_wq kworker frees them one by one.
  em.Exit(trainer);
  for (const Queue& q : trainer_queues) {
    em.Destroy(q, GPUQ_DESTROY_PROCESS_EXIT);
  }

  // The host process releases the queue the agent only knew from sysfs.
  em.Destroy(seeded, GPUQ_DESTROY_IOCTL, GPUQ_DESTROY_F_UNTRACKED);

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

}  // namespace gpuq
