#include "model/reconciler.h"

#include <fmt/format.h>

#include <string>

#include "common/log.h"

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

namespace {

// "pid 12 queue 3 on GPU 43459, ..." for the first few of `queues`.
template <typename Queue, typename Describe>
std::string FirstQueues(const std::vector<Queue>& queues, Describe describe) {
  constexpr size_t kShown = 3;
  std::string out;
  for (size_t i = 0; i < queues.size() && i < kShown; ++i) {
    if (i != 0) out += ", ";
    out += describe(queues[i]);
  }
  if (queues.size() > kShown) {
    out += fmt::format(" and {} more", queues.size() - kShown);
  }
  return out;
}

}  // namespace

// A correction means a record was lost (a skipped program, a full ring
// buffer) or the queue predates the agent: counted in
// gpuq_reconcile_corrections_total, and said here, because a queue added
// from sysfs has no ring addresses and its submissions are not sampled.
void LogCorrections(const Reconciler::Actions& actions) {
  if (!actions.add.empty()) {
    Log().Write(
        LogLevel::kInfo,
        fmt::format(
            "reconciliation: {} queue(s) in sysfs that no create record "
            "announced, added and counted as created, without ring addresses "
            "(their submissions are not sampled): {}",
            actions.add.size(),
            FirstQueues(actions.add, [](const SysfsQueue& q) {
              return fmt::format("pid {} queue {} on GPU {}", q.pid, q.queue_id,
                                 q.gpu_id);
            })));
  }
  if (!actions.remove.empty()) {
    Log().Write(
        LogLevel::kInfo,
        fmt::format(
            "reconciliation: {} queue(s) gone from sysfs with no destroy "
            "record, removed and counted as destroyed (reason unknown): {}",
            actions.remove.size(),
            FirstQueues(actions.remove, [](const QueueState& q) {
              return fmt::format("pid {} queue {} on GPU {}", q.tgid,
                                 q.queue_id, q.gpu_id);
            })));
  }
}

gpuq_queue_destroy_event RecoveredDestroy(const QueueState& q, uint64_t ts_ns) {
  gpuq_queue_destroy_event e{};
  e.hdr.type = GPUQ_EV_QUEUE_DESTROY;
  e.hdr.size = sizeof(e);
  e.hdr.tgid = q.tgid;
  e.hdr.ts_ns = ts_ns;
  e.hdr.cgroup_id = q.cgroup_id;
  e.hdr.process_key = q.process_key;
  e.gpu_id = q.gpu_id;
  e.queue_id = q.queue_id;
  e.queue_type = q.queue_type;
  e.reason = GPUQ_DESTROY_UNKNOWN;
  e.flags = GPUQ_DESTROY_F_RECOVERED;
  return e;
}

}  // namespace gpuq
