// Preemption as the victims see it: whose active queues a runlist operation
// took off the GPU, how often, for how long, and whose operation caused it
// (gpuq_queue_preemptions_total, gpuq_queue_preempted_seconds_total).
//
// What counts as taken off (amdkfd's device_queue_manager.c, the same from
// 6.1 to 7.3):
// - HWS: unmap_queues_cpsch preempts the runlist uploaded by the last
//   map_queues_cpsch, or nothing when no runlist is mapped (its early
//   return on !dqm->active_runlist). Its victims are the queues that were
//   mapped and are still active. The operation's own queue is not one: a
//   destroyed queue is off its list before the unmap, an evicted or
//   terminated process's queues are inactive or gone, a restored process's
//   were not mapped, a created queue is not mapped yet. A created queue is
//   mapped by its create's map, which comes before its create record: the
//   model holds it from that map (Model::created_unrecorded_).
// - MES: remove_queue_mes takes one queue off; it is a victim only when it
//   stays (the update path: remove, update the MQD, add again).
// The agent sees the runlist record of an operation before the record of the
// operation itself (the create, destroy or eviction record is written at its
// return), so the owner's own queues are taken out by cause here.
#pragma once

#include <gpuq/abi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "model/scheduler.h"

namespace gpuq {

/// One (victim container, GPU, scheduler, cause of the operation, whether
/// the victim's own container caused it).
struct PreemptionKey {
  uint64_t cgroup_id;
  uint32_t gpu_id;
  Scheduler scheduler;
  uint32_t cause;  ///< gpuq_runlist_cause
  bool by_self;    ///< the operation's process is in the victim's cgroup
  bool operator<(const PreemptionKey& o) const {
    return std::tie(cgroup_id, gpu_id, scheduler, cause, by_self) <
           std::tie(o.cgroup_id, o.gpu_id, o.scheduler, o.cause, o.by_self);
  }
};
struct PreemptionSeries {
  uint64_t preemptions = 0;
  /// Unmap entry to the return of the map that put the queues back; counted
  /// when that map returns.
  uint64_t off_ns = 0;
};

/// A process's active queues on one GPU, as the model holds them.
struct ActiveHolder {
  uint64_t process_key = 0;
  uint32_t tgid = 0;
  /// Seeded from sysfs, keyed by tgid until a record names its kernel key.
  bool keyed_by_tgid = false;
  uint64_t cgroup_id = 0;
  uint32_t queues = 0;
};

/// Thread-safety: none; the model's caller serialises.
class PreemptionTracker {
 public:
  /// Receives every preemption as it is counted: whose queues, and the
  /// cgroup of the process whose operation caused it (0: none, a reset or
  /// suspend). The report's "who preempted whom".
  using PreemptedSink =
      std::function<void(const PreemptionKey& key, uint64_t by_cgroup)>;
  /// Receives every window as it closes: whose queues, whose operation took
  /// them off, and from when to when they were off (the report's timeline).
  using WindowSink =
      std::function<void(const PreemptionKey& key, uint64_t by_cgroup,
                         uint64_t start_ns, uint64_t end_ns)>;
  void SetSinks(PreemptedSink preempted, WindowSink window) {
    preempted_sink_ = std::move(preempted);
    window_sink_ = std::move(window);
  }

  /// An HWS unmap of `e.gpu_id`; `holders` are the processes holding active
  /// queues on that GPU when it is applied.
  void OnHwsUnmap(const gpuq_runlist_event& e,
                  const std::vector<ActiveHolder>& holders,
                  std::map<PreemptionKey, PreemptionSeries>* out);
  /// An HWS map: closes the GPU's windows when it succeeds.
  void OnHwsMap(const gpuq_runlist_event& e,
                std::map<PreemptionKey, PreemptionSeries>* out);
  /// An MES remove of queue (e.hdr.process_key, e.queue_id), owned by
  /// `owner_cgroup`; only an update's remove takes a queue that stays.
  void OnMesRemove(const gpuq_runlist_event& e, uint64_t owner_cgroup,
                   std::map<PreemptionKey, PreemptionSeries>* out);
  /// An MES add: closes the queue's window when it succeeds.
  void OnMesAdd(const gpuq_runlist_event& e,
                std::map<PreemptionKey, PreemptionSeries>* out);
  /// A queue is gone, or back on the GPU: its MES window ends at `ts_ns`.
  void OnQueueGone(uint64_t process_key, uint32_t queue_id, uint64_t ts_ns,
                   std::map<PreemptionKey, PreemptionSeries>* out);
  /// Drops the open windows of `cgroup_id` (its container is gone).
  void EraseCgroup(uint64_t cgroup_id);
  /// GPUs whose runlist an HWS unmap took off and no map has put back,
  /// plus MES queues removed for an update and not added back: the state a
  /// recording begun now does not carry (Model::Unrecordable).
  size_t HeldOff() const;
  /// At most this many MES queues are held off at once (a lost destroy
  /// leaves one open); more are counted but their time is not.
  static constexpr size_t kMaxMesWindows = 16384;

 private:
  struct Window {
    PreemptionKey key;
    uint64_t by_cgroup;  ///< the causing operation's cgroup
    uint64_t start_ns;
  };
  /// Counts a preemption of `key` caused by `e` and opens its window.
  Window Open(const PreemptionKey& key, const gpuq_runlist_event& e,
              std::map<PreemptionKey, PreemptionSeries>* out) const;
  void Close(const Window& w, uint64_t end_ns,
             std::map<PreemptionKey, PreemptionSeries>* out) const;

  /// HWS: per GPU, whether a runlist is mapped (absent: not seen yet).
  std::map<uint32_t, bool> hws_mapped_;
  /// HWS: per GPU, the containers off it since the last unmap.
  std::map<uint32_t, std::vector<Window>> hws_off_;
  /// MES: per (process key, queue id), the queue removed for an update.
  std::map<std::pair<uint64_t, uint32_t>, Window> mes_off_;
  PreemptedSink preempted_sink_;
  WindowSink window_sink_;
};

}  // namespace gpuq
