// The state the agent exports: processes and their hardware queues, keyed by
// kernel identity, with lifecycle counters per owner cgroup, GPU and queue
// type. Attribution to containers happens at export time from the cgroup id
// (resolver/attributor.h), so the model holds no label strings.
#pragma once

#include <gpuq/abi.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/doorbell_tally.h"
#include "common/tuple_hash.h"
#include "model/histogram.h"
#include "model/model_observer.h"
#include "model/oversubscription.h"
#include "model/preemption.h"
#include "model/queue_cu_mask.h"
#include "model/queue_priority.h"
#include "model/scheduler.h"
#include "model/unsampled.h"
#include "resolver/gpu_topology.h"
#include "sources/event.h"
#include "sources/kfd_sysfs.h"
#include "submissions/sample_target.h"

namespace gpuq {

/// A live queue. Keyed by (process key, KFD queue id).
struct QueueSeries;

struct QueueState {
  /// The model's number for this queue (1, 2, ...): stays when a seeded
  /// queue is re-keyed under its kfd_process.
  uint64_t serial = 0;
  uint64_t process_key = 0;  ///< kfd_process pointer, or the tgid if seeded
  uint32_t queue_id = 0;
  uint32_t tgid = 0;
  uint64_t cgroup_id = 0;
  uint32_t gpu_id = 0;
  uint32_t queue_type = 0;
  uint32_t queue_format = 0;
  uint64_t ring_address = 0;
  uint64_t ring_size = 0;
  uint64_t read_ptr = 0;
  uint64_t write_ptr = 0;
  uint32_t priority = 0;
  uint32_t percentage = 0;
  uint64_t created_ns = 0;
  bool seeded = false;  ///< found in sysfs, not seen being created
  /// Ring, percentage and priority from an AMDKFD_IOC_UPDATE_QUEUE: a
  /// seeded queue's are known from then on.
  bool updated = false;
  /// Set by an AMDKFD_IOC_SET_CU_MASK (judged when it was set); none: a
  /// queue never given one, which runs on every CU.
  std::optional<CuMaskClass> cu_mask;
  /// The AMDKFD_IOC_SET_CU_MASK record that set cu_mask, as it came: a
  /// recording started later begins with it (Model::StateAsRecords).
  std::shared_ptr<const gpuq_queue_cu_mask_event> cu_mask_record;
  uint32_t flags = 0;  ///< GPUQ_CREATE_F_* of its create record
  /// Reconciliation counted its destroy (a tombstone of Forget()).
  bool destroy_counted = false;
  /// Counted as a create: seen created, or found by reconciliation after
  /// its create record was lost (GPUQ_CREATE_F_RECOVERED); not a queue live
  /// before the agent started or the capture began.
  bool CountedCreate() const {
    return !seeded || (flags & GPUQ_CREATE_F_RECOVERED) != 0;
  }
  uint64_t doorbell_handle = 0;        ///< 0: unknown
  uint64_t write_index_at_create = 0;  ///< baseline with ROCR_LAYOUT

  // What the sampler last read (GPUQ_EV_QUEUE_SAMPLE).
  bool sampled = false;  ///< has a baseline: deltas count from here
  /// The last sample: none yet, read, or not readable.
  enum class LastRead : uint8_t { kNone, kOk, kFailed };
  LastRead last_read = LastRead::kNone;
  bool readable() const { return last_read == LastRead::kOk; }
  /// Written minus consumed packets as last read; 0 unless readable. A
  /// read can land between the CP's update of read_dispatch_id and ours of
  /// the write index (read > write): nothing is pending then.
  uint64_t pending() const {
    return readable() && write_index > read_index ? write_index - read_index
                                                  : 0;
  }
  uint64_t write_index = 0;
  uint64_t read_index = 0;
  uint64_t sample_ns = 0;  ///< ts_ns of the last readable sample
  /// Packets and time between the last two readable samples (rate_ns 0:
  /// fewer than two since the baseline).
  uint64_t rate_packets = 0;
  uint64_t rate_ns = 0;

  /// Model::SeriesOf's memo: the series this queue counts in, valid while
  /// the model's series generation is still `series_generation` (a series
  /// erased since could have been this one).
  QueueSeries* series = nullptr;
  uint64_t series_generation = 0;
};

/// A process holding at least one live queue.
struct ProcessState {
  uint64_t process_key = 0;
  uint32_t tgid = 0;
  uint64_t cgroup_id = 0;
  std::string comm;
  bool exited = false;  ///< its mm is gone; teardown pending
  std::map<uint32_t, uint32_t> queues_per_gpu;  ///< gpu_id -> live queues
  /// (write_ptr, queue id) of its live queues, sorted: each create looks for
  /// a live queue at its amd_queue_t (Model::RemoveQueueAtSameAddress). A
  /// vector, as a process holds a handful: a tree node per queue cost a
  /// malloc and a free per create and destroy.
  std::vector<std::pair<uint64_t, uint32_t>> queues;
  void AddQueue(uint64_t write_ptr, uint32_t queue_id) {
    const std::pair<uint64_t, uint32_t> q{write_ptr, queue_id};
    queues.insert(std::lower_bound(queues.begin(), queues.end(), q), q);
  }
  void RemoveQueue(uint64_t write_ptr, uint32_t queue_id) {
    const std::pair<uint64_t, uint32_t> q{write_ptr, queue_id};
    auto it = std::lower_bound(queues.begin(), queues.end(), q);
    if (it != queues.end() && *it == q) queues.erase(it);
  }
  /// Its runtime knobs, once the sampler read them.
  std::optional<gpuq_process_knobs_record> knobs;
};

/// Counter/gauge cell for one (cgroup, owner process, gpu, queue type).
/// tgid 0 holds what processes retired from the model had counted.
struct QueueSeriesKey {
  uint64_t cgroup_id;
  uint32_t tgid;
  uint32_t gpu_id;
  uint32_t queue_type;
  bool operator<(const QueueSeriesKey& o) const {
    return std::tie(cgroup_id, tgid, gpu_id, queue_type) <
           std::tie(o.cgroup_id, o.tgid, o.gpu_id, o.queue_type);
  }
  bool operator==(const QueueSeriesKey& o) const {
    return std::tie(cgroup_id, tgid, gpu_id, queue_type) ==
           std::tie(o.cgroup_id, o.tgid, o.gpu_id, o.queue_type);
  }
};

/// When an owner (cgroup, tgid) last changed, and what it holds now.
struct OwnerActivity {
  uint64_t last_change_ns = 0;  ///< the agent's steady clock
  uint64_t live = 0;            ///< live queues of this owner
  std::string comm;
};
struct QueueSeries {
  uint64_t live = 0;
  uint64_t creates = 0;
  std::array<uint64_t, GPUQ_DESTROY__MAX> destroys{};  ///< by reason
  uint64_t submissions = 0;  ///< AQL packets written (write index deltas)
};

/// Outcome of each GPUQ_EV_QUEUE_SAMPLE, monotonic; every sample counts once.
struct SampleStats {
  uint64_t ok = 0;
  uint64_t reset = 0;  ///< write index went backwards: new baseline
  uint64_t unreadable = 0;
  uint64_t denied = 0;         ///< unreadable for want of ptrace access
  uint64_t unknown_queue = 0;  ///< no live queue of that key
};

/// Doorbell rings of one (ringer's cgroup, gpu); gpu 0 = handle not known.
struct DoorbellSeriesKey {
  uint64_t cgroup_id;
  uint32_t gpu_id;
  bool operator<(const DoorbellSeriesKey& o) const {
    return std::tie(cgroup_id, gpu_id) < std::tie(o.cgroup_id, o.gpu_id);
  }
};
using DoorbellSeries = DoorbellTally;

struct RunlistKey {
  uint32_t gpu_id;
  Scheduler scheduler;
  bool operator<(const RunlistKey& o) const {
    return std::tie(gpu_id, scheduler) < std::tie(o.gpu_id, o.scheduler);
  }
};
struct RunlistSeries {
  std::map<uint32_t, uint64_t> unmaps_by_filter;  ///< filter 0: MES remove
  DurationHistogram unmap;
  DurationHistogram map;
};
/// Failed runlist operations of one GPU by op and errno.
struct RunlistFailureKey {
  uint32_t gpu_id;
  Scheduler scheduler;
  bool unmap;
  int32_t error;  ///< negative errno
  bool operator<(const RunlistFailureKey& o) const {
    return std::tie(gpu_id, scheduler, unmap, error) <
           std::tie(o.gpu_id, o.scheduler, o.unmap, o.error);
  }
};
/// Runlist operations a known process caused (gpuq_runlist_cause).
struct RunlistCauseKey {
  uint64_t cgroup_id;
  uint32_t gpu_id;
  Scheduler scheduler;
  bool unmap;
  uint32_t cause;
  bool operator<(const RunlistCauseKey& o) const {
    return std::tie(cgroup_id, gpu_id, scheduler, unmap, cause) <
           std::tie(o.cgroup_id, o.gpu_id, o.scheduler, o.unmap, o.cause);
  }
};

/// Evictions of one (cgroup, gpu, trigger) and their evict-to-restore time.
struct EvictionKey {
  uint64_t cgroup_id;
  uint32_t gpu_id;
  uint32_t trigger;  ///< gpuq_eviction_trigger; GPUQ_TRIGGER_UNKNOWN if odd
  bool operator<(const EvictionKey& o) const {
    return std::tie(cgroup_id, gpu_id, trigger) <
           std::tie(o.cgroup_id, o.gpu_id, o.trigger);
  }
};
struct EvictionSeries {
  uint64_t evictions = 0;
  DurationHistogram duration;  ///< observed at the matching restore
};

/// Create failures for one (cgroup, gpu, errno).
struct FailureKey {
  uint64_t cgroup_id;
  uint32_t gpu_id;
  int32_t error;  ///< negative errno
  bool operator<(const FailureKey& o) const {
    return std::tie(cgroup_id, gpu_id, error) <
           std::tie(o.cgroup_id, o.gpu_id, o.error);
  }
};

/// Losses and anomalies the model itself sees, monotonic.
struct ModelDrops {
  uint64_t unknown_queue =
      0;  ///< destroy or update of a queue never seen created
  /// create of a queue already live: its queue id, or its ROCr amd_queue_t
  /// (a lost destroy either way)
  uint64_t duplicate_create = 0;
  /// Eviction or doorbell records without an owner cgroup: not counted
  /// per container (runlist operations of unknown cause are per GPU only).
  uint64_t no_owner = 0;
};

/// A process holding queues, for --once.
struct ProcessRow {
  uint32_t pid = 0;
  std::string comm;
  uint64_t cgroup_id = 0;
  bool exited = false;
  std::map<uint32_t, uint32_t> queues_per_gpu;
  /// AQL packets per second between the last two samples of its queues, by
  /// gpu (gpus without two samples are absent).
  std::map<uint32_t, double> submission_rate_per_gpu;
  /// RuntimeKnobsLabel of its knobs; nullopt: not read (not sampled).
  std::optional<std::string> knobs;
};

/// The cgroup id a series key carries (see ModelSeries::ForEachCgroupMap).
inline uint64_t CgroupOfKey(uint64_t cgroup_id) { return cgroup_id; }
inline uint64_t CgroupOfKey(const std::pair<uint64_t, uint32_t>& key) {
  return key.first;  // (cgroup, gpu)
}
/// (cgroup, gpu, a class: priority, CU mask, why not sampled...).
template <class Class>
uint64_t CgroupOfKey(const std::tuple<uint64_t, uint32_t, Class>& key) {
  return std::get<0>(key);
}
template <class Key>
uint64_t CgroupOfKey(const Key& key) {
  return key.cgroup_id;
}

/// Everything the model exports, keyed by kernel identity (no labels): a
/// snapshot copies it in one piece, so a new series is declared here once
/// and needs no copy of its own. The model keeps the counted part; the
/// derived part (marked below) is computed from live state by
/// Model::Series() and stays empty in the model's own copy.
struct ModelSeries {
  std::map<QueueSeriesKey, QueueSeries> queue_series;
  std::map<FailureKey, uint64_t> create_failures;
  std::map<uint64_t, uint64_t> process_exits;  ///< by cgroup id
  SampleStats sample_stats;
  std::map<DoorbellSeriesKey, DoorbellSeries> doorbells;
  std::map<RunlistKey, RunlistSeries> runlist;
  std::map<RunlistFailureKey, uint64_t> runlist_failures;
  std::map<RunlistCauseKey, uint64_t> runlist_causes;
  /// HWS GPUs' runlists against the scheduler's limits, by gpu id.
  std::map<uint32_t, OversubscriptionSeries> oversubscription;
  /// Queues taken off the GPU, as their containers see it.
  std::map<PreemptionKey, PreemptionSeries> preemptions;
  std::map<EvictionKey, EvictionSeries> evictions;
  std::map<std::pair<uint64_t, uint32_t>, uint64_t>
      restores;  ///< (cgroup, gpu)
  std::map<uint32_t, GpuNode> gpus;
  std::array<uint64_t, GPUQ_EV__MAX> events_by_type{};
  ModelDrops model_drops;
  /// What a replayed capture's recording agent lost before its records
  /// reached the capture (its last gpuq_source_drops_record; zero live):
  /// the pipeline adds it to its own source's drops.
  gpuq_source_drops_record recorded_drops{};

  // Derived, filled by Model::Series().
  /// Written minus consumed packets of sampled live queues, by (cgroup, gpu).
  std::map<std::pair<uint64_t, uint32_t>, uint64_t> pending_packets;
  uint64_t sampled_queues = 0;
  std::map<std::pair<uint64_t, uint32_t>, uint64_t> evicted;  ///< (cgroup, gpu)
  /// Live queues of processes evicted on their GPU and not restored yet
  /// (amdkfd marks every queue of an evicted process `is_evicted` and keeps
  /// it off the GPU until the restore), by (cgroup id, gpu id).
  std::map<std::pair<uint64_t, uint32_t>, uint64_t> queues_evicted;
  /// Processes holding queues, by (cgroup id, gpu id).
  std::map<std::pair<uint64_t, uint32_t>, uint64_t> processes;
  /// Live queues by (cgroup id, gpu id, priority class at create; kUnknown
  /// for queues seeded from sysfs, which shows no priority).
  std::map<std::tuple<uint64_t, uint32_t, PriorityClass>, uint64_t>
      queues_by_priority;
  /// Live queues by (cgroup id, gpu id, the queue priority asked for, 0-15;
  /// kUnknownQueuePriority for queues seeded from sysfs).
  std::map<std::tuple<uint64_t, uint32_t, uint32_t>, uint64_t>
      queues_by_requested_priority;
  /// Live queues given a CU mask, by (cgroup id, gpu id, its class).
  std::map<std::tuple<uint64_t, uint32_t, CuMaskClass>, uint64_t>
      queues_cu_masked;
  /// Live compute queues whose submissions are not counted, by (cgroup id,
  /// gpu id, why: model/unsampled.h).
  std::map<std::tuple<uint64_t, uint32_t, UnsampledReason>, uint64_t>
      unsampled_queues;
  /// By (cgroup id, pid).
  std::vector<ProcessRow> process_rows;

  /// Calls `f(map)` for every map keyed by cgroup (CgroupOfKey accepts its
  /// keys). A per-cgroup map is listed here and nowhere else: attribution
  /// (Pipeline::TakeSnapshot) and removal (EraseCgroup) both go through it.
  template <class Self, class F>
  static void ForEachCgroupMap(Self& self, F&& f) {
    f(self.queue_series);
    f(self.create_failures);
    f(self.process_exits);
    f(self.processes);
    f(self.queues_by_priority);
    f(self.queues_by_requested_priority);
    f(self.queues_cu_masked);
    f(self.unsampled_queues);
    f(self.pending_packets);
    f(self.doorbells);
    f(self.runlist_causes);
    f(self.preemptions);
    f(self.evictions);
    f(self.restores);
    f(self.evicted);
    f(self.queues_evicted);
  }
  /// Calls `f(cgroup_id)` for the cgroup of every per-cgroup series (once
  /// per series, not per cgroup).
  template <class F>
  void ForEachCgroup(F&& f) const {
    ForEachCgroupMap(*this, [&](const auto& map) {
      for (const auto& entry : map) f(CgroupOfKey(entry.first));
    });
  }
  /// Erases every series of `cgroup_id`.
  void EraseCgroup(uint64_t cgroup_id) {
    ForEachCgroupMap(*this, [&](auto& map) {
      for (auto it = map.begin(); it != map.end();) {
        it =
            CgroupOfKey(it->first) == cgroup_id ? map.erase(it) : std::next(it);
      }
    });
  }
};

/// Result of comparing the model with KFD sysfs.
struct ReconcileDiff {
  std::vector<SysfsQueue> missing_in_model;   ///< in sysfs, not in the model
  std::vector<QueueState> missing_in_sysfs;   ///< in the model, not in sysfs
  std::map<uint32_t, int64_t> drift_per_gpu;  ///< model minus sysfs, per gpu
};

/// Thread-safety: not thread-safe; the pipeline serialises all access.
class Model {
 public:
  Model() = default;
  // Moved, never copied: series_index_ points into series_'s own nodes
  // (a move takes them along).
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  Model(Model&&) = default;
  Model& operator=(Model&&) = default;

  /// Applies one event. GPU_INFO records update the GPU table; CGROUP_PATH
  /// records are the attributor's business and are only counted here.
  void Apply(const Event& event);

  /// Compares live queues with the sysfs inventory (matched by tgid and
  /// queue id; seeded queues are keyed by tgid).
  ReconcileDiff Diff(const std::vector<SysfsQueue>& sysfs) const;
  /// Tombstones (see Forget()) kept at most, oldest out first.
  static constexpr size_t kMaxTombstones = 16384;

  /// The agent's steady clock (ns) used to stamp activity; set before
  /// Apply() by the pipeline.
  void SetNow(uint64_t now_ns) { now_ns_ = now_ns; }
  /// Folds the series of owners that hold no queue and have been idle for
  /// `grace_ns` into their cgroup's tgid-0 series (container totals stay
  /// monotonic; per-process series go away). Returns how many were folded.
  size_t RetireIdleOwners(uint64_t grace_ns);
  /// cgroups holding no queue, idle for `grace_ns`, with their last change.
  std::map<uint64_t, uint64_t> IdleCgroups(uint64_t grace_ns) const;
  /// Erases every series, failure and exit count of `cgroup_id` (its
  /// container is gone).
  void EraseCgroup(uint64_t cgroup_id);
  /// Activity by (cgroup, tgid), sorted.
  std::map<std::pair<uint64_t, uint32_t>, OwnerActivity> owners() const {
    return {owners_.begin(), owners_.end()};
  }

  // Submissions, doorbells, runlist and evictions.
  /// Live queues with a ROCr amd_queue_t (GPUQ_CREATE_F_ROCR_LAYOUT) and
  /// index addresses: what the sampler reads.
  std::vector<SampleTarget> SampleTargets() const;
  /// The live queue whose create named doorbell `handle` in process `tgid`.
  std::optional<DoorbellOwner> FindDoorbell(uint32_t tgid,
                                            uint64_t handle) const;
  /// (tgid, handle) of every live queue whose create named its doorbell.
  std::vector<std::pair<uint32_t, uint64_t>> KnownDoorbells() const;
  /// Written minus consumed packets of live queues whose last sample was
  /// readable, by (cgroup, gpu).
  std::map<std::pair<uint64_t, uint32_t>, uint64_t> PendingPackets() const;
  /// Live queues whose last sample was readable.
  size_t SampledQueues() const;
  /// Packets per second between the last two samples of each live queue,
  /// summed by (process key, gpu); queues with fewer samples are left out.
  std::map<uint64_t, std::map<uint32_t, double>> SubmissionRates() const;
  /// Processes evicted and not restored, by (cgroup, gpu).
  std::map<std::pair<uint64_t, uint32_t>, uint64_t> EvictedProcesses() const;
  /// Sets the live queues by class in `s`: queues_by_priority,
  /// queues_by_requested_priority, queues_cu_masked and unsampled_queues
  /// (what Series() exports of them; the report reads them alone at each
  /// bucket end). Kept as queues change, so this copies the counts and
  /// walks no queue.
  void AddQueueClasses(ModelSeries* s) const;

  /// Told each decision as it is made (the report's analysis); null: none.
  /// Not owned; set before the first Apply().
  void SetObserver(ModelObserver* observer);

  /// The state a capture started now must begin with, so that its replay
  /// holds what this model holds (the recording API's captures): each GPU's
  /// record, then each live queue as a seeded create (its current ring,
  /// priority and percentage; its baseline the last index the sampler read,
  /// so the packets counted before now are not counted again), an update
  /// record where its priority is known, the outcome of its last sample and its
  /// CU mask record, all stamped `ts_ns`, queues in the order they came.
  std::vector<Event> StateAsRecords(uint64_t ts_ns) const;
  /// What StateAsRecords() does not carry yet, so a recording begun now
  /// sees it from its next record on rather than from its start
  /// (docs/recording-api.md): runlists and MES queues held off the GPU,
  /// evictions not restored, GPUs whose runlist a map has read.
  struct Unrecorded {
    size_t held_off = 0;
    size_t evictions = 0;
    size_t runlist_shapes = 0;
    bool empty() const {
      return held_off == 0 && evictions == 0 && runlist_shapes == 0;
    }
  };
  Unrecorded Unrecordable() const;
  /// Each doorbell's cumulative counts as last polled, by (tgid, handle):
  /// what a recording started now subtracts from the poller's counts.
  std::map<std::pair<uint32_t, uint64_t>, DoorbellSeries> DoorbellCounts()
      const;

  /// Everything the model exports: the counted series and the derived ones.
  /// The one read path of its series (the pipeline's snapshot, tests).
  ModelSeries Series() const;

 private:
  struct Key {
    uint64_t process_key;
    uint32_t queue_id;
    bool operator==(const Key& o) const {
      return process_key == o.process_key && queue_id == o.queue_id;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      return std::hash<uint64_t>()(k.process_key * 31 + k.queue_id);
    }
  };

  // Apply()'s handlers, one per alternative of Event.
  void On(const gpuq_queue_create_event& e);
  void On(const gpuq_queue_destroy_event& e);
  void On(const gpuq_process_exit_event& e);
  void On(const gpuq_queue_create_failed_event& e);
  void On(const gpuq_gpu_info_record& e);
  void On(const gpuq_queue_sample_record& e);
  void On(const gpuq_doorbell_count_record& e);
  void On(const gpuq_runlist_event& e);
  void On(const gpuq_eviction_event& e);
  void On(const gpuq_queue_update_event& e);
  void On(const gpuq_queue_cu_mask_event& e);
  /// Removes the live queue of `process_key` whose write index lives where
  /// the ROCr queue `e` creates now has its own (its destroy was lost).
  void RemoveQueueAtSameAddress(uint64_t process_key,
                                const gpuq_queue_create_event& e);
  /// A capture's count of what its recorder lost: the last one counts (it
  /// is cumulative, and a re-recorded capture carries its input's too).
  void On(const gpuq_source_drops_record& e) { series_.recorded_drops = e; }
  void On(const gpuq_process_knobs_record& e);
  // Cgroup paths and runtime metadata are the pipeline's (attribution).
  void On(const CgroupPathRecord&) {}
  void On(const ContainerMetaRecord&) {}
  /// The live queue of (process key, queue id), or of the tgid's seeded
  /// process; null if none.
  QueueState* FindQueue(uint64_t process_key, uint32_t tgid, uint32_t queue_id);
  /// Removes a live queue and updates gauges; returns the series it counted
  /// in (its destroy counts there too), null if it was not live.
  QueueSeries* Remove(const Key& key, QueueState* removed);
  /// Removes the live queue `key` whose destroy was lost (a create showed
  /// it: the same key, or its amd_queue_t), counting a duplicate_create.
  void RemoveReplaced(const Key& key, uint64_t ts_ns);
  /// The tombstone of the queue `e` destroys (by kernel key, else the
  /// tgid's seeded key), taken out; false if none.
  bool TakeTombstone(const gpuq_queue_destroy_event& e, QueueState* removed);
  /// A GPUQ_DESTROY_F_RECOVERED destroy (reconciliation: the queue left
  /// sysfs, no destroy record came): removes the live queue, counts its
  /// destroy (reason unknown) and keeps it as a tombstone. Its destroy record
  /// may still be in flight (on 6.1 the sysfs entry goes before the HW
  /// destroy, which can wait for the scheduler's preemption): when it
  /// arrives it takes the tombstone, never an unknown_queue drop, and counts
  /// no second destroy. A create of the same key retires the tombstone:
  /// amdkfd frees a queue id only after uninit_queue(), so a destroy still
  /// to come always precedes the id's reuse.
  void Forget(const gpuq_queue_destroy_event& e);
  /// Moves the queues of a seeded process (keyed by tgid) under its real
  /// kernel key once an event names that key.
  void AdoptSeeded(uint64_t process_key, uint32_t tgid);
  /// Erases a process, keeping seeded_processes_.
  void EraseProcess(std::unordered_map<uint64_t, ProcessState>::iterator it);
  ProcessState& ProcessFor(uint64_t process_key, uint32_t tgid,
                           uint64_t cgroup_id);
  /// Stamps activity of an owner; `live_delta` is +1/-1/0.
  void Touch(uint64_t cgroup_id, uint32_t tgid, int live_delta,
             const std::string& comm);

  std::unordered_map<Key, QueueState, KeyHash> queues_;
  /// The live queues of one (cgroup, GPU) by class (AddQueueClasses),
  /// counted as each queue is added, changed or removed: every change of a
  /// field Classify() reads takes the queue out of its classes first and
  /// counts it in after. One node per (cgroup, GPU), so a create or destroy
  /// steps its two to four classes with one lookup (a map per class cost a
  /// lookup each); AddQueueClasses sorts the counts into ModelSeries' maps.
  struct ClassCounts {
    uint64_t queues = 0;  ///< counted here: the node goes with the last
    std::array<uint64_t, static_cast<size_t>(PriorityClass::kUnknown) + 1>
        by_priority{};
    std::array<uint64_t, kUnknownQueuePriority + 1> by_requested_priority{};
    std::array<uint64_t, static_cast<size_t>(CuMaskClass::kUnknown) + 1>
        cu_masked{};
    std::array<uint64_t, static_cast<size_t>(UnsampledReason::kUnreadable) + 1>
        unsampled{};
  };
  std::unordered_map<std::pair<uint64_t, uint32_t>, ClassCounts, TupleHash>
      classes_;
  /// Counts `q` in classes_ (`delta` +1) or takes it out (-1), and tells
  /// the observer.
  void Classify(const QueueState& q, int delta);
  void StepClasses(const QueueClasses& c, int delta);
  /// Applies `change` to `q`, moving it between classes where the change
  /// moved it (a sample that reads as the last one did moves nothing).
  template <typename Change>
  void Reclassify(QueueState* q, Change change) {
    const QueueClasses before = ClassesOf(*q);
    change();
    const QueueClasses after = ClassesOf(*q);
    if (before == after) return;
    StepClasses(before, -1);
    StepClasses(after, +1);
  }
  static QueueClasses ClassesOf(const QueueState& q);
  /// Queues Forget() removed, by key, until their destroy or the key's
  /// reuse; tombstone_order_ is their insertion order (for the cap; stale
  /// entries are skipped).
  std::unordered_map<Key, QueueState, KeyHash> tombstones_;
  std::deque<Key> tombstone_order_;
  std::unordered_map<uint64_t, ProcessState> processes_;
  /// How many of processes_ are keyed by tgid (seeded, owner not yet seen
  /// by kernel key): while none is, a kernel record has nothing to adopt.
  size_t seeded_processes_ = 0;
  /// Each GPU's record as it came (StateAsRecords).
  std::map<uint32_t, gpuq_gpu_info_record> gpu_records_;
  /// The counted series (ModelSeries' derived part stays empty here).
  ModelSeries series_;
  /// series_.queue_series[key], found through a hashed index of its nodes:
  /// every create, destroy and sample counts in one.
  QueueSeries& SeriesFor(const QueueSeriesKey& key);
  /// The series `q` counts in (cgroup, owner, GPU, type), memoized in `q`.
  QueueSeries& SeriesOf(QueueState* q);
  /// Empties series_index_ where a series of series_ is erased: its node
  /// is gone, and every queue's memo of one with it.
  void ForgetSeriesIndex();
  struct QueueSeriesKeyHash {
    size_t operator()(const QueueSeriesKey& k) const {
      return TupleHash()(
          std::make_tuple(k.cgroup_id, k.tgid, k.gpu_id, k.queue_type));
    }
  };
  /// SeriesFor()'s index: cleared wherever a series is erased (std::map
  /// nodes stay where they are otherwise).
  std::unordered_map<QueueSeriesKey, QueueSeries*, QueueSeriesKeyHash>
      series_index_;
  /// Counts ForgetSeriesIndex() calls: a QueueState's memoized series is
  /// valid while this is what it was when memoized.
  uint64_t series_generation_ = 1;
  /// Hashed: every create and destroy stamps its owner (Touch).
  std::unordered_map<std::pair<uint64_t, uint32_t>, OwnerActivity, TupleHash>
      owners_;
  uint64_t now_ns_ = 0;

  /// (tgid, doorbell handle): hashed, as every create, destroy and doorbell
  /// count looks one up (a tree of thousands costs a cache miss a level).
  using TgidHandle = std::pair<uint32_t, uint64_t>;
  struct TgidHandleHash {
    size_t operator()(const TgidHandle& k) const {
      return std::hash<uint64_t>()(k.second * 31 + k.first);
    }
  };
  /// What the model knows of a doorbell (tgid, handle): one node, as a
  /// queue's create and destroy and each poll of its count look it up (an
  /// owner map and a count map cost a lookup each and a node per queue).
  struct Doorbell {
    /// The live queue that named it at create; none once that one is gone.
    std::optional<Key> owner;
    /// Whether the fields below say anything: a count was polled, or an
    /// owner went (a doorbell only named at create has neither).
    bool kept = false;
    /// The cgroup of its last count, else of its queue that went.
    uint64_t cgroup_id = 0;
    /// The GPU of the doorbell's queue, kept when the queue goes: its last
    /// rings may be polled after its destroy.
    uint32_t gpu_id = 0;
    /// Its last cumulative DOORBELL_COUNT.
    DoorbellSeries counts;
  };
  std::unordered_map<TgidHandle, Doorbell, TgidHandleHash> doorbells_;
  /// (process key, gpu) -> eviction waiting for its restore.
  std::map<std::pair<uint64_t, uint32_t>, EvictionNotice> pending_evictions_;
  uint64_t evictions_seen_ = 0;  ///< numbers EvictionNotice::serial
  uint64_t queues_seen_ = 0;     ///< numbers QueueState::serial
  /// (process key, gpu) -> queues an HWS map of the process's own create put
  /// on the runlist before their create record came. amdkfd maps a new
  /// active queue inside create_queue_cpsch; its record is written later
  /// (kfd_procfs_add_queue in the BTF tiers, the ioctl's return in
  /// args-kprobe), and another process's unmap in between takes it off too
  /// (seen with real HIP programs in the simulator tier, 6.1 and 7.3).
  struct CreatedUnrecorded {
    uint32_t tgid = 0;
    uint64_t cgroup_id = 0;
    uint32_t queues = 0;
  };
  std::map<std::pair<uint64_t, uint32_t>, CreatedUnrecorded>
      created_unrecorded_;
  /// amdkfd's KFD_MAX_NUM_OF_QUEUES_PER_PROCESS: no more can be waiting for
  /// their records (a lost record leaves its queue here until the exit).
  static constexpr uint32_t kMaxQueuesPerProcess = 1024;
  PreemptionTracker preemption_;
  OversubscriptionWindowSink oversubscription_sink_;
  /// SetObserver()'s; every decision below is told to it when set.
  ModelObserver* observer_ = nullptr;
  static ModelObserver& Silent();
  ModelObserver& Tell() { return observer_ != nullptr ? *observer_ : Silent(); }
  /// Processes holding queues on `gpu_id` that a runlist would map: live,
  /// active at create (ring, percentage) and not evicted there.
  std::vector<ActiveHolder> ActiveHolders(uint32_t gpu_id) const;
};

/// The process key the model uses for a seeded queue of `tgid`: kernel
/// pointers are canonical upper-half addresses, so a pid never collides.
inline uint64_t SeededProcessKey(uint32_t tgid) { return tgid; }

}  // namespace gpuq
