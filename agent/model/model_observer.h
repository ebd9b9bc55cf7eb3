// What the model decides, as it decides it: a queue becomes live or leaves,
// its write index is read, a process is evicted or restored, a runlist
// operation is applied (its GPU resolved), a preemption or oversubscribed
// window closes. The report's analysis follows the model through this
// instead of keeping a second copy of its rules (which queue a record
// names, what a destroy's last write index adds, when an eviction ends).
#pragma once

#include <gpuq/abi.h>

#include <cstdint>
#include <optional>

#include "model/oversubscription.h"
#include "model/preemption.h"
#include "model/queue_cu_mask.h"
#include "model/queue_priority.h"
#include "model/unsampled.h"

namespace gpuq {

struct QueueState;

/// Why a live queue left the model.
struct QueueEnd {
  enum class How : uint8_t {
    kDestroyed,   ///< its destroy record (`destroy_reason`)
    kReplaced,    ///< a create of its key or its amd_queue_t: destroy lost
    kReconciled,  ///< gone from sysfs without a destroy record (yet)
  };
  How how = How::kDestroyed;
  uint32_t destroy_reason = 0;  ///< gpuq_destroy_reason, with kDestroyed
};

/// What a live queue counts as in the class gauges (gpuq_queues_by_priority,
/// gpuq_queues_cu_masked, gpuq_unsampled_queues): Model::Classify's verdict.
struct QueueClasses {
  uint64_t cgroup_id = 0;
  uint32_t gpu_id = 0;
  PriorityClass priority = PriorityClass::kUnknown;
  uint32_t requested_priority = 0;
  std::optional<CuMaskClass> cu_mask;        ///< none: never given one
  std::optional<UnsampledReason> unsampled;  ///< none: sampled
  bool operator==(const QueueClasses& o) const {
    return cgroup_id == o.cgroup_id && gpu_id == o.gpu_id &&
           priority == o.priority &&
           requested_priority == o.requested_priority && cu_mask == o.cu_mask &&
           unsampled == o.unsampled;
  }
};

/// An eviction the model counted: a process's queues on a GPU.
struct EvictionNotice {
  uint64_t process_key = 0;
  uint32_t tgid = 0;
  uint64_t cgroup_id = 0;
  uint32_t gpu_id = 0;
  uint32_t trigger = 0;  ///< a known gpuq_eviction_trigger
  uint64_t evict_ns = 0;
  /// The model's number for it (1, 2, ...), the same at its end.
  uint64_t serial = 0;
};

/// Called from the model's Apply(), on its caller's thread; every method
/// has an empty default. States passed are the model's, after the change.
class ModelObserver {
 public:
  virtual ~ModelObserver() = default;

  /// A queue became live: created, or seeded from sysfs.
  virtual void QueueAdded(const QueueState& /*q*/) {}
  /// A sample of the queue's indices: `q.last_read` says whether it read;
  /// `packets` is what its write index added (the exported submissions).
  virtual void QueueSampled(const QueueState& /*q*/, uint64_t /*packets*/) {}
  /// The owner's final write index came with the queue's destroy: `packets`
  /// written after the last sample (called before QueueRemoved; also for a
  /// queue reconciliation removed earlier).
  virtual void QueueLastWords(const QueueState& /*q*/, uint64_t /*packets*/) {}
  /// A live queue left at `ts_ns`.
  virtual void QueueRemoved(const QueueState& /*q*/, uint64_t /*ts_ns*/,
                            QueueEnd /*end*/) {}
  /// The class gauges stepped: a queue counted under `c` (`delta` +1) or
  /// taken out of it (-1); a change of priority, CU mask or sampling is a
  /// -1 and a +1.
  virtual void QueueClassified(const QueueClasses& /*c*/, int /*delta*/) {}

  /// An HWS map/unmap or MES add/remove the model applied, with the GPU it
  /// resolved (an MES op on a seeded queue names none).
  virtual void RunlistApplied(const gpuq_runlist_event& /*e*/) {}
  /// An eviction record counted; `opened`: it began a window (not a
  /// repeat while the process was evicted there already).
  virtual void Evicted(const EvictionNotice& /*n*/, bool /*opened*/) {}
  /// An eviction window ended at `end_ns`: restored, or its process exited.
  virtual void EvictionEnded(const EvictionNotice& /*n*/, uint64_t /*end_ns*/,
                             bool /*restored*/) {}

  /// A container's queues were taken off the GPU by an operation of a
  /// process in `by_cgroup` (0: none, a reset or suspend).
  virtual void Preempted(const PreemptionKey& /*key*/, uint64_t /*by_cgroup*/) {
  }
  /// A container's queues were back on the GPU (or gone): the window from
  /// `start_ns` to `end_ns` they were off it, opened by `by_cgroup`'s
  /// operation.
  virtual void PreemptionWindow(const PreemptionKey& /*key*/,
                                uint64_t /*by_cgroup*/, uint64_t /*start_ns*/,
                                uint64_t /*end_ns*/) {}
  /// A runlist that was oversubscribed was replaced.
  virtual void OversubscribedWindow(uint32_t /*gpu_id*/, uint64_t /*start_ns*/,
                                    uint64_t /*end_ns*/,
                                    const RunlistShape& /*shape*/) {}
};

}  // namespace gpuq
