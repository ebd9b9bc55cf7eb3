// Decides what to correct when the model and KFD sysfs disagree. A queue's
// sysfs entry and its kernel event are not atomic (the entry appears inside
// kfd_procfs_add_queue; on 6.1 it goes before the HW destroy), so one pass can
// see a difference that the next event resolves. Only differences seen in
// two consecutive passes are corrected.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "model/model.h"

namespace gpuq {

/// Cumulative reconciliation statistics (exported as self-metrics).
struct ReconcileStats {
  uint64_t runs = 0;
  uint64_t errors = 0;   ///< passes that could not read sysfs
  uint64_t added = 0;    ///< queues in sysfs the model lacked
  uint64_t removed = 0;  ///< queues in the model sysfs lacked
  std::map<uint32_t, int64_t> drift_per_gpu;  ///< last pass, model - sysfs
};

/// Thread-safety: not thread-safe.
class Reconciler {
 public:
  struct Actions {
    std::vector<SysfsQueue> add;     ///< seed these into the model
    std::vector<QueueState> remove;  ///< forget these
  };

  /// Feeds one pass's diff; returns the persistent differences to correct.
  Actions Next(const ReconcileDiff& diff);
  void CountError() { ++stats_.runs, ++stats_.errors; }
  /// Records the drift left after this pass's corrections.
  void SetDrift(std::map<uint32_t, int64_t> drift) {
    stats_.drift_per_gpu = std::move(drift);
  }
  const ReconcileStats& stats() const { return stats_; }

 private:
  using Id = std::pair<uint32_t, uint32_t>;  // (tgid, queue id)
  std::set<Id> pending_add_;
  std::set<Id> pending_remove_;
  ReconcileStats stats_;
};

/// Says (info, one line each) which queues a pass adds or removes, the
/// first few by pid, queue and GPU.
void LogCorrections(const Reconciler::Actions& actions);

/// The destroy record of a queue a pass removes (GPUQ_DESTROY_F_RECOVERED,
/// reason unknown, at `ts_ns`): applied and recorded like a kernel's, so a
/// capture's replay counts what the live agent counted.
gpuq_queue_destroy_event RecoveredDestroy(const QueueState& q, uint64_t ts_ns);

}  // namespace gpuq
