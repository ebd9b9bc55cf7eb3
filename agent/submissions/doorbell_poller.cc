#include "submissions/doorbell_poller.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "common/clock.h"
#include "loader/kernel_features.h"

namespace gpuq {
namespace {

/// The probed symbols, in the order Probes() lists them. hsa_signal_store_
/// release (an alias of screlease in Debian's build, a function of its own
/// elsewhere) runs the screlease program, so it is reported under it. The
/// last two are uretprobes that retire the counter's cached queues.
struct ProbedSymbol {
  const char* probe;
  const char* function;
};
constexpr ProbedSymbol kSymbols[] = {
    {"doorbell_store_screlease", "hsa_signal_store_screlease"},
    {"doorbell_store_relaxed", "hsa_signal_store_relaxed"},
    {"doorbell_queue_destroy", "hsa_queue_destroy"},
    {"doorbell_shut_down", "hsa_shut_down"},
};

/// True if pids under `procfs` are those of the initial pid namespace (what
/// bpf_get_current_pid_tgid reports). `self` exists only in a procfs whose
/// namespace holds this process; its status lists this process's pid in
/// that namespace and every one below it (NStgid, Linux 4.1+). More than one
/// entry: the procfs is an ancestor's (the host's /proc mounted in a
/// container). One: it is this process's own namespace, the initial one if
/// its inode is PROC_PID_INIT_INO (0xEFFFFFFC, include/linux/proc_ns.h,
/// fixed since 3.8). /proc/1/ns is not used: reading it needs ptrace access
/// to pid 1, which sandboxes refuse.
bool InitPidNamespace(const std::string& procfs) {
  std::ifstream status(procfs + "/self/status");
  if (!status) return false;
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("NStgid:", 0) != 0) continue;
    std::istringstream pids(line.substr(7));
    int n = 0;
    std::string pid;
    while (pids >> pid) ++n;
    if (n > 1) return true;
  }
  char buf[64];
  const std::string link = procfs + "/self/ns/pid";
  const ssize_t n = readlink(link.c_str(), buf, sizeof(buf) - 1);
  if (n <= 0) return false;
  return std::string(buf, static_cast<size_t>(n)) == "pid:[4026531836]";
}

bool SameCounts(const DoorbellCount& a, const DoorbellCount& b) {
  return static_cast<const DoorbellTally&>(a) == b &&
         a.cgroup_id == b.cgroup_id;
}

/// The detail line of an attached `lib` that names `function` ("f@0x...").
std::string AttachedAt(const DoorbellLibrary& lib,
                       const std::string& function) {
  for (const std::string& d : lib.details) {
    if (d.rfind(function + "@", 0) == 0) return d;
  }
  return function;
}

}  // namespace

std::unique_ptr<DoorbellPoller> DoorbellPoller::Open(const Options& options,
                                                     std::string* error) {
  if (!HasBpfPrivileges()) {
    *error =
        "--doorbells=uprobe needs root (or CAP_BPF + CAP_PERFMON) to load "
        "BPF programs and attach uprobes";
    return nullptr;
  }
  // libbpf attaches uprobes through the uprobe PMU (perf_event_open), or
  // tracefs uprobe_events on kernels before 4.17; without either
  // (CONFIG_UPROBE_EVENTS=n) every attach would fail later, one by one.
  struct stat st;
  const std::string pmu =
      options.paths.sysfs + "/bus/event_source/devices/uprobe";
  if (stat(pmu.c_str(), &st) != 0 &&
      stat("/sys/kernel/tracing/uprobe_events", &st) != 0 &&
      stat("/sys/kernel/debug/tracing/uprobe_events", &st) != 0) {
    *error = fmt::format(
        "this kernel has no uprobe support ({} missing: "
        "CONFIG_UPROBE_EVENTS): --doorbells=uprobe cannot work",
        pmu);
    return nullptr;
  }
  std::string why;
  std::unique_ptr<DoorbellCounter> counter =
      DoorbellCounter::Open(options, &why);
  if (counter == nullptr) {
    *error = fmt::format("--doorbells=uprobe: {}", why);
    return nullptr;
  }
  std::unique_ptr<DoorbellPoller> poller(new DoorbellPoller());
  poller->paths_ = options.paths;
  poller->scan_ = options.scan_processes;
  poller->exits_visible_ = InitPidNamespace(options.paths.procfs);
  poller->counter_ = std::move(counter);
  return poller;
}

DoorbellPoller::~DoorbellPoller() = default;

std::set<uint32_t> DoorbellPoller::QueueOwners() const {
  std::set<uint32_t> owners;
  for (const Key& key : known_) owners.insert(key.first);
  return owners;
}

int DoorbellPoller::Rescan() {
  std::lock_guard<std::mutex> lock(mu_);
  return scan_ ? counter_->Rescan(QueueOwners()) : 0;
}

int DoorbellPoller::ScanQueueOwners() {
  std::lock_guard<std::mutex> lock(mu_);
  return scan_ ? counter_->ScanQueueOwners(QueueOwners()) : 0;
}

void DoorbellPoller::SyncKnown(
    const std::vector<std::pair<uint32_t, uint64_t>>& known) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::set<Key> want(known.begin(), known.end());
  for (auto it = known_.begin(); it != known_.end();) {
    if (want.count(*it) == 0) {
      counter_->RemoveKnownDoorbell(it->first, it->second);
      it = known_.erase(it);
    } else {
      ++it;
    }
  }
  for (const Key& key : want) {
    if (known_.count(key) != 0) continue;
    // E2BIG: the map is full. Not remembered, so the next sync retries.
    if (counter_->AddKnownDoorbell(key.first, key.second)) {
      known_.insert(key);
    } else {
      ++known_full_;
    }
  }
}

bool DoorbellPoller::ProcessAlive(uint32_t tgid) const {
  // tgid is in the init pid namespace (bpf_get_current_pid_tgid), so procfs
  // must be the host's (as for the sampler's /proc/<pid>/mem reads).
  struct stat st;
  return stat(fmt::format("{}/{}", paths_.procfs, tgid).c_str(), &st) == 0;
}

void DoorbellPoller::Poll(
    const std::function<std::optional<DoorbellOwner>(uint32_t, uint64_t)>& find,
    const std::function<void(const Event&)>& sink) {
  std::vector<DoorbellCount> changed;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Which ringers have exited, decided before the counts are read: a
    // process that exits after this check is kept until the next Poll, so
    // the counts emitted for a process deemed gone are final (it cannot
    // ring again) and its entries can be deleted without losing a doorbell.
    std::map<uint32_t, bool> alive;
    if (exits_visible_) {
      for (const DoorbellCount& c : counter_->Read()) {
        auto [a, fresh] = alive.emplace(c.tgid, false);
        if (fresh) a->second = ProcessAlive(c.tgid);
      }
    }
    std::map<Key, DoorbellCount> seen;
    for (const DoorbellCount& c : counter_->Read()) {
      const Key key{c.tgid, c.handle};
      const auto last = last_.find(key);
      if (last == last_.end() || !SameCounts(last->second, c))
        changed.push_back(c);
      const auto a = alive.find(c.tgid);
      if (!exits_visible_ || a == alive.end() || a->second) {
        seen.emplace(key, c);
      } else {
        // Final counts read: free the slot. A later process with the same
        // tgid and handle starts again from zero.
        counter_->DeleteCount(c.tgid, c.handle);
      }
    }
    last_ = std::move(seen);
  }
  // find and sink take the pipeline's lock: called without ours, so a
  // thread holding that lock may call Probes() or MapFullDrops().
  const uint64_t now = MonotonicNowNs();
  for (const DoorbellCount& c : changed) {
    gpuq_doorbell_count_record r{};
    r.hdr.type = GPUQ_EV_DOORBELL_COUNT;
    r.hdr.size = sizeof(r);
    r.hdr.tgid = c.tgid;
    r.hdr.ts_ns = now;
    r.hdr.cgroup_id = c.cgroup_id;  // the ringer's
    r.doorbell_handle = c.handle;
    if (const std::optional<DoorbellOwner> owner = find(c.tgid, c.handle)) {
      r.hdr.process_key = owner->owner.process_key;
      r.gpu_id = owner->gpu_id;
      r.queue_id = owner->queue_id;
    }
    c.WriteTo(&r);
    sink(Event(r));
  }
}

std::vector<ProbeStatus> DoorbellPoller::NotAttached(const std::string& why) {
  std::vector<ProbeStatus> rows;
  for (const ProbedSymbol& sym : kSymbols)
    rows.push_back({sym.probe, sym.function, "none", false, why, "", "none"});
  return rows;
}

std::vector<ProbeStatus> DoorbellPoller::Probes() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ProbeStatus> out;
  const std::vector<DoorbellLibrary>& libs = counter_->Libraries();
  for (const ProbedSymbol& sym : kSymbols) {
    ProbeStatus p;
    p.probe = sym.probe;
    p.function = sym.function;
    p.mode = "uprobe";
    p.tier = "uprobe";
    std::vector<std::string> on;
    std::vector<std::string> failed;
    for (const DoorbellLibrary& lib : libs) {
      if (lib.attached) {
        on.push_back(
            fmt::format("{} ({})", lib.path, AttachedAt(lib, sym.function)));
      } else {
        // The last detail line says why (see DoorbellCounter::AttachLibrary).
        failed.push_back(lib.details.empty() ? lib.path : lib.details.back());
      }
    }
    p.attached = !on.empty();
    if (on.empty() && failed.empty()) {
      p.detail =
          scan_ ? "no libhsa-runtime64 mapped by any process yet (rescanned "
                  "periodically; or pass --hsa-runtime PATH)"
                : "no --hsa-runtime library given";
    } else {
      if (!on.empty()) {
        p.detail = fmt::format("attached in {}", fmt::join(on, ", "));
      }
      if (!failed.empty()) {
        if (!p.detail.empty()) p.detail += "; ";
        p.detail += fmt::format("not attached: {}", fmt::join(failed, "; "));
      }
    }
    if (!exits_visible_) {
      p.detail += fmt::format(
          "; {} is not the host pid namespace's: counts of exited processes "
          "are not freed (the map may fill)",
          paths_.procfs);
    }
    out.push_back(std::move(p));
  }
  return out;
}

uint64_t DoorbellPoller::MapFullDrops() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counter_->Drops() + known_full_;
}

std::vector<DoorbellCount> DoorbellPoller::Read() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counter_->Read();
}

}  // namespace gpuq
