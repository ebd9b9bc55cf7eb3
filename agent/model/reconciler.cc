#include "model/reconciler.h"

namespace gpuq {

Reconciler::Actions Reconciler::Next(const ReconcileDiff& diff) {
  Actions actions;
  std::set<Id> add_now;
  for (const SysfsQueue& q : diff.missing_in_model) {
    const Id id{q.pid, q.queue_id};
    add_now.insert(id);
    if (pending_add_.count(id) != 0) actions.add.push_back(q);
  }
  std::set<Id> remove_now;
  for (const QueueState& q : diff.missing_in_sysfs) {
    const Id id{q.tgid, q.queue_id};
    remove_now.insert(id);
    if (pending_remove_.count(id) != 0) actions.remove.push_back(q);
  }
  // What is corrected now is no longer pending; the rest waits one pass.
  for (const SysfsQueue& q : actions.add) add_now.erase({q.pid, q.queue_id});
  for (const QueueState& q : actions.remove) {
    remove_now.erase({q.tgid, q.queue_id});
  }
  pending_add_ = std::move(add_now);
  pending_remove_ = std::move(remove_now);

  ++stats_.runs;
  stats_.added += actions.add.size();
  stats_.removed += actions.remove.size();
  stats_.drift_per_gpu = diff.drift_per_gpu;
  return actions;
}

}  // namespace gpuq
