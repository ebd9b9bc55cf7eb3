// The doorbell path of --doorbells=uprobe, as the agent drives it: a
// DoorbellCounter (bpf/doorbell.bpf.c on libhsa-runtime64's doorbell stores)
// plus what turns its kernel map into GPUQ_EV_DOORBELL_COUNT records: the
// known-doorbell set mirrored from the model, change detection between polls,
// and clean-up of exited processes so the count map does not fill.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/host_paths.h"
#include "loader/probe_status.h"
#include "sources/event.h"
#include "submissions/doorbell_counter.h"
#include "submissions/sample_target.h"

namespace gpuq {

/// Owns the doorbell uprobes and reads them. Thread-safety: every method
/// takes an internal lock, so Probes() may be called from another thread
/// than the one polling; Poll calls `find` and `sink` without holding it.
/// Poll itself is meant for one thread (records of two concurrent Polls may
/// interleave out of order).
class DoorbellPoller {
 public:
  /// The counter's: --hsa-runtime files attached at Open (a bad path is an
  /// error) and, with scan_processes, the libhsa-runtime64 files processes
  /// have mapped, at Open and at every Rescan.
  using Options = DoorbellCounter::Options;

  /// nullptr + *error on failure (no uprobe support, bad --hsa-runtime path,
  /// no privileges). Finding no library at all is not a failure: Rescan
  /// picks up processes that load one later.
  static std::unique_ptr<DoorbellPoller> Open(const Options& options,
                                              std::string* error);

  ~DoorbellPoller();
  DoorbellPoller(const DoorbellPoller&) = delete;
  DoorbellPoller& operator=(const DoorbellPoller&) = delete;

  /// Attaches to libhsa-runtime64 files newly mapped by processes (once per
  /// file: device and inode; DoorbellCounter::Rescan says whose maps are
  /// read). No-op without scan_processes. Returns how many were attached.
  int Rescan();

  /// Reads the maps of processes that own queues since the last SyncKnown
  /// and were not read as owners yet: their library is attached before the
  /// next Rescan. No-op without scan_processes.
  int ScanQueueOwners();

  /// Mirrors `known` (the (tgid, handle) pairs learned at queue creation,
  /// Pipeline::KnownDoorbells) into the kernel's known_doorbells map: adds
  /// the new ones, deletes those no longer listed. Doorbells whose signal
  /// does not say DOORBELL (ROCr's InterceptQueue) count only while known.
  void SyncKnown(const std::vector<std::pair<uint32_t, uint64_t>>& known);

  /// Emits one GPUQ_EV_DOORBELL_COUNT per (tgid, handle) whose counts
  /// changed since the last Poll (cumulative counts; header: tgid, the
  /// ringer's cgroup id, process_key from `find`, CLOCK_MONOTONIC ts), with
  /// gpu_id/queue_id from `find` when it knows the handle. Entries of
  /// processes that have exited are deleted from the kernel map after their
  /// final counts are emitted (only if paths.procfs is the host pid
  /// namespace's, where an absent <procfs>/<tgid> means exited).
  void Poll(const std::function<std::optional<DoorbellOwner>(uint32_t,
                                                             uint64_t)>& find,
            const std::function<void(const Event&)>& sink);

  /// One status per probed symbol ("doorbell_store_screlease",
  /// "doorbell_store_relaxed", "doorbell_queue_destroy",
  /// "doorbell_shut_down"), mode "uprobe": attached if attached in at least
  /// one library; detail names the libraries and any failure.
  std::vector<ProbeStatus> Probes() const;

  /// The same rows as Probes(), none attached, each saying `why` (the
  /// poller could not be opened).
  static std::vector<ProbeStatus> NotAttached(const std::string& why);

  /// Doorbells the kernel could not count because its count map was full
  /// (cumulative), plus known doorbells SyncKnown could not insert.
  uint64_t MapFullDrops() const;

  /// What the kernel's count map holds now, sorted by (tgid, handle): for
  /// tests and debugging; Poll is the way to consume counts.
  std::vector<DoorbellCount> Read() const;

 private:
  using Key = std::pair<uint32_t, uint64_t>;  // (tgid, handle)
  DoorbellPoller() = default;
  bool ProcessAlive(uint32_t tgid) const;
  std::set<uint32_t> QueueOwners() const;  // tgids of known_; mu_ held

  mutable std::mutex mu_;
  HostPaths paths_;
  bool scan_ = true;
  /// paths.procfs is the init pid namespace's, where the kernel's tgids
  /// live: only then can an absent <procfs>/<tgid> mean the process exited.
  bool exits_visible_ = false;
  std::unique_ptr<DoorbellCounter> counter_;
  std::map<Key, DoorbellCount> last_;  // what the last Poll emitted
  std::set<Key> known_;                // what known_doorbells holds
  uint64_t known_full_ = 0;            // known doorbells not inserted
};

}  // namespace gpuq
