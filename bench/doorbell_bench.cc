// Doorbell uprobe cost: calls per second of a loop ringing a doorbell through
// the stand-in libhsa-runtime64.so.1 (tests/bpf/hsa_standin), laid out as
// ROCr does (amd_signal_t kind DOORBELL -> amd_queue_t -> AQL ring), with
//   none      no probe,
//   empty     a uprobe whose BPF program returns 0 (the trap alone),
//   gpuq      gpuq's doorbell probes (DoorbellCounter on the stand-in),
//   gpuq plain  the same without the preemption guard (where the kernel has
//             bpf_preempt_disable): the guard's cost,
//   empty again  the empty uprobe once more (its ratio to the first: noise),
//   bpftrace  `uprobe:<lib>:hsa_signal_store_screlease
//              { @[pid, arg0] = count(); }` (per process and doorbell, as gpuq)
// interleaved rep by rep so they share the machine's noise: each rep runs
// none, then empty, gpuq, gpuq plain and empty again in an order rotated by
// one every rep (a loop's place in the rep, e.g. right after a program load,
// must not favour one mode), then bpftrace; each probed loop is preceded by
// an untimed warm-up of the same probe. The bench pins itself to one CPU
// (--cpu) so that no loop pays for a migration the others did not. Medians
// and ratios are printed, and the
// BPF bodies' own ns per run from the kernel's stats. Target: gpuq costs no
// more than 1.05x the empty uprobe. Needs root.
//
// Built a second time as gpuq-bench-doorbell-rocr (GPUQ_BENCH_REAL_ROCR):
// the same loop through Debian's real libhsa-runtime64.so.1 (ROCr 5.2.3) on
// a real ROCr queue, created with hsa_queue_create on the null GPU of
// tests/nullgpu (run it with LD_LIBRARY_PATH=<build>/tests/nullgpu/lib). The
// loop rings the queue's doorbell signal without advancing its write index,
// so the null CP consumes nothing; each call runs ROCr's real store path
// (API table, signal lookup, 64-bit doorbell store).
#include <bpf/bpf.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#ifdef GPUQ_BENCH_REAL_ROCR
#include <hsa/amd_hsa_queue.h>
#include <hsa/amd_hsa_signal.h>
#include <hsa/hsa.h>
#define AQL_PACKET_BYTES 64
#else
#include "amd_hsa_layout.h"
#endif
#include "bench_args.h"
#include "bench_stats.h"
#include "doorbell_bench.skel.h"
#include "loader/kernel_features.h"
#include "submissions/doorbell_counter.h"

namespace {

using gpuq::bench::Median;

constexpr uint32_t kRingPackets = 64;

/// The doorbell rung: a queue laid out here for the stand-in, or a real
/// ROCr queue's ring and doorbell signal.
struct Ring {
  uint8_t* ring = nullptr;
  uint32_t packets = 0;
  hsa_signal_t signal = {0};
  uint64_t index = 0;  // the value rung next
};

#ifndef GPUQ_BENCH_REAL_ROCR
struct Queue {
  amd_queue_t amd;
  amd_signal_t doorbell;
  uint64_t hw_doorbell = 0;
  alignas(64) uint8_t ring[kRingPackets * AQL_PACKET_BYTES] = {};
};
#endif

/// Seconds for `calls` doorbells, half dispatch half barrier packets.
double RingLoop(Ring* r, long calls) {
  const hsa_signal_t signal = r->signal;
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < calls; ++i) {
    const uint64_t index = r->index++;
    auto* header = reinterpret_cast<uint16_t*>(
        r->ring + (index & (r->packets - 1)) * AQL_PACKET_BYTES);
    __atomic_store_n(
        header,
        static_cast<uint16_t>(i & 1 ? HSA_PACKET_TYPE_BARRIER_AND
                                    : HSA_PACKET_TYPE_KERNEL_DISPATCH),
        __ATOMIC_RELEASE);
    hsa_signal_store_screlease(signal, static_cast<hsa_signal_value_t>(index));
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Run time and run count the kernel accumulated for programs `fds`
/// (BPF_ENABLE_STATS must be on).
std::pair<uint64_t, uint64_t> ProgramStats(const std::vector<int>& fds) {
  uint64_t ns = 0;
  uint64_t runs = 0;
  for (int fd : fds) {
    bpf_prog_info info = {};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) continue;
    ns += info.run_time_ns;
    runs += info.run_cnt;
  }
  return {ns, runs};
}

/// Fds of the loaded kprobe-type programs whose name starts with `prefix`
/// (the kernel keeps 15 characters of a name); the caller closes them.
std::vector<int> ProgramsNamed(const std::string& prefix) {
  std::vector<int> fds;
  uint32_t id = 0;
  while (bpf_prog_get_next_id(id, &id) == 0) {
    const int fd = bpf_prog_get_fd_by_id(id);
    if (fd < 0) continue;
    bpf_prog_info info = {};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 &&
        info.type == BPF_PROG_TYPE_KPROBE &&
        std::strncmp(info.name, prefix.c_str(), prefix.size()) == 0) {
      fds.push_back(fd);
    } else {
      close(fd);
    }
  }
  return fds;
}

/// True if `name` is an executable file in a $PATH directory.
bool OnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string file = dirs.substr(start, end - start) + "/" + name;
    if (access(file.c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

/// bpftrace running the one-liner, ready once its BEGIN probe printed
/// (BEGIN fires after every probe is attached).
class Bpftrace {
 public:
  Bpftrace(const std::string& library, std::string* error) {
    int out[2];
    if (pipe(out) != 0) return;
    const std::string program =
        "BEGIN { printf(\"gpuq-ready\\n\"); } uprobe:" + library +
        ":hsa_signal_store_screlease { @[pid, arg0] = count(); }";
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      dup2(out[1], 2);
      close(out[0]);
      execlp("bpftrace", "bpftrace", "-B", "none", "-e", program.c_str(),
             static_cast<char*>(nullptr));
      std::printf("exec bpftrace failed: %s\n", std::strerror(errno));
      _exit(127);
    }
    close(out[1]);
    out_ = fdopen(out[0], "r");
    char line[1024];
    while (std::fgets(line, sizeof(line), out_) != nullptr) {
      log_ += line;
      if (std::strncmp(line, "gpuq-ready", 10) == 0) {
        ready_ = true;
        return;
      }
    }
    *error = "bpftrace did not attach: " + log_;
  }
  ~Bpftrace() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ != nullptr) std::fclose(out_);
  }
  bool ready() const { return ready_; }
  /// Stops it (SIGINT prints the map) and returns the count for (`pid`,
  /// `handle`): a line "@[pid, handle]: count".
  long StopAndCount(pid_t pid, uint64_t handle) {
    kill(pid_, SIGINT);
    char line[1024];
    long count = -1;
    const std::string key =
        "@[" + std::to_string(pid) + ", " + std::to_string(handle) + "]:";
    while (std::fgets(line, sizeof(line), out_) != nullptr) {
      if (std::strncmp(line, key.c_str(), key.size()) == 0)
        count = std::atol(line + key.size());
    }
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    return count;
  }

 private:
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
  bool ready_ = false;
  std::string log_;
};

}  // namespace

int main(int argc, char** argv) {
  gpuq::bench::Args args{"Doorbell uprobe cost (see bench/README.md)"};
  long calls = 100000;
  int reps = 7;
  bool no_bpftrace = false;
  std::string library = GPUQ_BENCH_HSA_LIBRARY;
  args.Add("--calls", calls, "doorbells per measurement");
  args.Add("--reps", reps, "interleaved repetitions (medians)");
  args.Flag("--no-bpftrace", no_bpftrace, "skip the bpftrace one-liner");
  bool per_rep = false;
  args.Flag("--per-rep", per_rep, "print each rep's ns per call");
  int cpu = -2;  // the CPU the bench starts on
  args.Add("--cpu", cpu, -1, CPU_SETSIZE - 1,
           "the CPU to pin the bench to (default: the one it starts on; -1: "
           "not pinned)");
  args.Add("--library", library,
           "the libhsa-runtime64.so.1 the loop calls (for the probes)");
  if (const auto status = args.Parse(argc, argv)) return *status;
  if (!gpuq::HasBpfPrivileges()) {
    std::printf("needs root to attach uprobes\n");
    return 0;
  }
  if (cpu == -2) cpu = sched_getcpu();
  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) {
      std::printf("cannot pin to CPU %d: %s\n", cpu, std::strerror(errno));
      return 1;
    }
  }
  // The untimed loop run after each attach, before the timed one: the first
  // rings of a fresh probe (the breakpoint's page, the programs' maps and
  // caches) are not part of what a ring costs.
  const long warm = std::max(1L, calls / 100);

  Ring ring;
#ifdef GPUQ_BENCH_REAL_ROCR
  // A real ROCr queue on the first GPU agent (the null GPU's gfx90a).
  if (hsa_init() != HSA_STATUS_SUCCESS) {
    std::printf(
        "hsa_init failed: run on the null GPU "
        "(LD_LIBRARY_PATH=<build>/tests/nullgpu/lib) or on an AMD GPU\n");
    return 0;
  }
  hsa_agent_t gpu = {0};
  hsa_iterate_agents(
      [](hsa_agent_t a, void* data) {
        hsa_device_type_t type;
        hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &type);
        if (type != HSA_DEVICE_TYPE_GPU) return HSA_STATUS_SUCCESS;
        *static_cast<hsa_agent_t*>(data) = a;
        return HSA_STATUS_INFO_BREAK;
      },
      &gpu);
  hsa_queue_t* rocr_queue = nullptr;
  if (gpu.handle == 0 ||
      hsa_queue_create(gpu, kRingPackets, HSA_QUEUE_TYPE_MULTI, nullptr,
                       nullptr, UINT32_MAX, UINT32_MAX,
                       &rocr_queue) != HSA_STATUS_SUCCESS) {
    std::printf("no GPU agent or hsa_queue_create failed\n");
    return 1;
  }
  ring.ring = static_cast<uint8_t*>(rocr_queue->base_address);
  ring.packets = rocr_queue->size;
  ring.signal = rocr_queue->doorbell_signal;
#else
  auto q = std::make_unique<Queue>();
  std::memset(&q->amd, 0, sizeof(q->amd));
  std::memset(&q->doorbell, 0, sizeof(q->doorbell));
  q->doorbell.kind = AMD_SIGNAL_KIND_DOORBELL;
  q->doorbell.hardware_doorbell_ptr = &q->hw_doorbell;
  q->doorbell.queue_ptr = &q->amd;
  q->amd.hsa_queue.base_address = q->ring;
  q->amd.hsa_queue.doorbell_signal.handle =
      reinterpret_cast<uint64_t>(&q->doorbell);
  q->amd.hsa_queue.size = kRingPackets;
  ring.ring = q->ring;
  ring.packets = kRingPackets;
  ring.signal.handle = reinterpret_cast<uint64_t>(&q->doorbell);
#endif

  std::vector<gpuq::ElfFunction> functions;
  std::string error;
  if (!gpuq::ReadElfFunctions(library, {"hsa_signal_store_screlease"},
                              &functions, &error) ||
      functions.empty()) {
    std::printf("cannot resolve hsa_signal_store_screlease: %s\n",
                error.c_str());
    return 1;
  }
  const uint64_t offset = functions[0].file_offset;

  std::map<std::string, std::vector<double>> secs;
  std::vector<double> rep_ratio;  // gpuq / empty, within one rep
  // The programs' own run time, as the kernel measures it (the trap is
  // outside it): far less noisy than wall-clock on a VM. The stats stay on
  // while this fd is open.
  const int stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
  std::map<std::string, std::pair<uint64_t, uint64_t>> body;
  std::string bpftrace_status = no_bpftrace ? "skipped (--no-bpftrace)" : "";
  if (bpftrace_status.empty() && !OnPath("bpftrace"))
    bpftrace_status =
        "row skipped: bpftrace is not installed (Debian package bpftrace; "
        "scripts/install-deps.sh --test installs it)";
  bool counts_ok = true;
  // The empty uprobe, measured twice a rep (before and after gpuq's): the
  // second, "empty again", is the same thing measured again, so its ratio
  // to the first is this machine's noise on the ratios below.
  auto measure_empty = [&](const char* mode) {
    doorbell_bench_bpf* empty = doorbell_bench_bpf__open_and_load();
    if (empty == nullptr) {
      std::printf("cannot load the empty uprobe\n");
      return false;
    }
    LIBBPF_OPTS(bpf_uprobe_opts, opts);
    bpf_link* link = bpf_program__attach_uprobe_opts(
        empty->progs.empty_uprobe, -1, library.c_str(), offset, &opts);
    if (link == nullptr) {
      std::printf("cannot attach the empty uprobe: %s\n", std::strerror(errno));
      doorbell_bench_bpf__destroy(empty);
      return false;
    }
    RingLoop(&ring, warm);
    secs[mode].push_back(RingLoop(&ring, calls));
    auto st = ProgramStats({bpf_program__fd(empty->progs.empty_uprobe)});
    body["empty"].first += st.first;
    body["empty"].second += st.second;
    bpf_link__destroy(link);
    doorbell_bench_bpf__destroy(empty);
    return true;
  };
  // gpuq's store programs, counted exactly. `plain`: the pair without the
  // preemption guard (bpf/doorbell.bpf.c), measured beside the guarded one
  // where the kernel has the kfuncs: the guard's own cost. One ringer, so
  // the plain pair's shared private stack is never contended here.
  auto measure_gpuq = [&](const char* mode, bool plain) {
    gpuq::DoorbellCounter::Options options;
    options.libraries = {library};
    options.scan_processes = false;
    options.plain_programs = plain;
    auto counter = gpuq::DoorbellCounter::Open(options, &error);
    if (counter == nullptr) {
      std::printf("cannot attach gpuq's probes: %s\n", error.c_str());
      return false;
    }
    RingLoop(&ring, warm);
    secs[mode].push_back(RingLoop(&ring, calls));
    const auto st = ProgramStats(counter->ProgramFds());
    body[mode].first += st.first;
    body[mode].second += st.second;
    uint64_t counted = 0;
    uint64_t typed = 0;
    for (const gpuq::DoorbellCount& c : counter->Read()) {
      if (c.tgid != static_cast<uint32_t>(getpid())) continue;
      counted += c.doorbells;
      typed +=
          c.by_packet[GPUQ_PACKET_DISPATCH] + c.by_packet[GPUQ_PACKET_BARRIER];
    }
    if (counted != static_cast<uint64_t>(warm + calls) || typed != counted) {
      std::printf("%s counted %lu doorbells (%lu typed), rang %ld\n", mode,
                  static_cast<unsigned long>(counted),
                  static_cast<unsigned long>(typed), warm + calls);
      counts_ok = false;
    }
    return true;
  };
  const bool guarded = gpuq::KernelHasPreemptKfuncs();
  RingLoop(&ring, calls / 10);  // warm up
  std::vector<std::string> probed = {"empty", "gpuq", "empty again"};
  if (guarded) probed.insert(probed.begin() + 2, "gpuq plain");
  for (int rep = 0; rep < reps; ++rep) {
    secs["none"].push_back(RingLoop(&ring, calls));

    for (size_t i = 0; i < probed.size(); ++i) {
      const std::string& mode = probed[(i + rep) % probed.size()];
      const bool ok = mode.rfind("empty", 0) == 0
                          ? measure_empty(mode.c_str())
                          : measure_gpuq(mode.c_str(), mode == "gpuq plain");
      if (!ok) return 1;
    }
    rep_ratio.push_back(secs["gpuq"].back() / secs["empty"].back());

    if (bpftrace_status.empty() || bpftrace_status == "ok") {
      Bpftrace bt(library, &error);
      if (!bt.ready()) {
        bpftrace_status = "could not attach: " + error;
      } else {
        secs["bpftrace"].push_back(RingLoop(&ring, calls));
        // bpftrace names its program after the function it probes.
        const std::vector<int> fds = ProgramsNamed("hsa_signal_stor");
        const auto st = ProgramStats(fds);
        body["bpftrace"].first += st.first;
        body["bpftrace"].second += st.second;
        for (int fd : fds) close(fd);
        const long n = bt.StopAndCount(getpid(), ring.signal.handle);
        if (n != calls) {
          std::printf("bpftrace counted %ld, rang %ld\n", n, calls);
          counts_ok = false;
        }
        bpftrace_status = "ok";
      }
    }
  }

  // Each rep's ns per call, in the order the rep ran them: a mode that is
  // slow in a few reps only (a neighbour, a migration of the host's vCPU)
  // shows here, one that is slow throughout shows in every line.
  if (per_rep) {
    std::printf("per rep, ns/call (the rep's first probed mode first):\n");
    for (int rep = 0; rep < reps; ++rep) {
      std::printf("  rep %2d", rep);
      for (size_t i = 0; i < probed.size(); ++i) {
        const std::string& mode = probed[(i + rep) % probed.size()];
        std::printf("  %s %.0f", mode.c_str(), secs[mode][rep] * 1e9 / calls);
      }
      std::printf("\n");
    }
  }
  std::printf("doorbell uprobe cost: %ld calls x %d reps, medians, %s\n", calls,
              reps,
              cpu >= 0 ? ("pinned to CPU " + std::to_string(cpu)).c_str()
                       : "not pinned");
  std::map<std::string, double> ns;
  for (const char* mode :
       {"none", "empty", "gpuq", "gpuq plain", "empty again", "bpftrace"}) {
    if (secs[mode].empty()) continue;
    const double s = Median(secs[mode]);
    ns[mode] = s * 1e9 / calls;
    std::printf("  %-11s %12.0f calls/s %10.1f ns/call\n", mode, calls / s,
                ns[mode]);
  }
  double body_extra = -1;  // gpuq's body minus the empty one, ns per ring
  if (stats_fd >= 0) {
    for (const char* mode : {"empty", "gpuq", "gpuq plain", "bpftrace"}) {
      const auto& b = body[mode];
      if (b.second != 0)
        std::printf(
            "  %-10s BPF program body %.0f ns/run (kernel stats, %lu runs)\n",
            mode, static_cast<double>(b.first) / b.second,
            static_cast<unsigned long>(b.second));
    }
    const auto& be = body["empty"];
    const auto& bg = body["gpuq"];
    if (be.second != 0 && bg.second != 0) {
      // What gpuq's body adds, against the whole cost of an empty uprobe
      // call: the part of the ratio that does not depend on the trap's cost.
      const double extra = static_cast<double>(bg.first) / bg.second -
                           static_cast<double>(be.first) / be.second;
      std::printf(
          "  gpuq body - empty body: %.0f ns/call = %.1f%% of an empty "
          "uprobe call here\n",
          extra, 100.0 * extra * calls / (Median(secs["empty"]) * 1e9));
      body_extra = extra;
      const auto& bb = body["bpftrace"];
      if (bb.second != 0)
        std::printf(
            "  gpuq body / bpftrace body: %.3f (bpftrace counts per process "
            "and doorbell too, reading no user memory)\n",
            (static_cast<double>(bg.first) / bg.second) /
                (static_cast<double>(bb.first) / bb.second));
    }
    const auto& bp = body["gpuq plain"];
    if (bg.second != 0 && bp.second != 0)
      std::printf(
          "  ratio gpuq / gpuq plain body: %.3f (the preemption guard, "
          "bpf_preempt_disable/enable and a subprogram call)\n",
          (static_cast<double>(bg.first) / bg.second) /
              (static_cast<double>(bp.first) / bp.second));
    close(stats_fd);
  } else {
    std::printf("  (BPF_ENABLE_STATS refused: no program body times)\n");
  }
  if (bpftrace_status != "ok")
    std::printf("  bpftrace: %s\n", bpftrace_status.c_str());
  if (!guarded)
    std::printf(
        "  gpuq plain: row skipped: this kernel lacks bpf_preempt_disable, so "
        "gpuq runs the plain programs (the gpuq row)\n");
  else
    std::printf("ratio gpuq / gpuq plain (ns per call): %.3f\n",
                ns["gpuq"] / ns["gpuq plain"]);
  const double ratio = ns["gpuq"] / ns["empty"];
  std::printf("ratio gpuq / empty uprobe (ns per call): %.3f\n", ratio);
  std::printf(
      "ratio empty again / empty uprobe (the same probe: noise): %.3f\n",
      ns["empty again"] / ns["empty"]);
  if (body_extra >= 0)
    std::printf(
        "ratio gpuq / empty uprobe from the body times (1 + body difference "
        "/ empty call): %.3f\n",
        1.0 + body_extra / ns["empty"]);
  std::printf("ratio gpuq / empty uprobe, median of per-rep ratios: %.3f\n",
              Median(rep_ratio));
  std::printf("ratio gpuq / empty, probe cost only (minus no-probe): %.3f\n",
              (ns["gpuq"] - ns["none"]) / (ns["empty"] - ns["none"]));
  if (ns.count("bpftrace")) {
    std::printf("ratio bpftrace / empty uprobe (ns per call): %.3f\n",
                ns["bpftrace"] / ns["empty"]);
    std::printf("ratio gpuq / bpftrace (ns per call): %.3f\n",
                ns["gpuq"] / ns["bpftrace"]);
  }
  // The per-ring body target: at most 1.05x the empty uprobe.
  std::printf("%s: gpuq costs <= 1.05x the empty uprobe (%.3f)\n",
              ratio <= 1.05 ? "PASS" : "MISS", ratio);
  if (!counts_ok) std::printf("counts: MISMATCH (see above)\n");
#ifdef GPUQ_BENCH_REAL_ROCR
  hsa_queue_destroy(rocr_queue);
  hsa_shut_down();
#endif
  return counts_ok ? 0 : 1;
}
