#include "model/preemption.h"

#include <algorithm>
#include <iterator>

#include "common/erase_if.h"
#include "model/runlist_cause.h"

namespace gpuq {
namespace {

/// Entry time of an operation written at its return.
uint64_t EntryNs(const gpuq_runlist_event& e) {
  return e.hdr.ts_ns > e.duration_ns ? e.hdr.ts_ns - e.duration_ns : 0;
}

/// How many of `h`'s active queues the unmap `e` took off the GPU: the
/// operation's own process loses what the operation itself removes first
/// (see the header's list).
uint32_t QueuesTakenOff(const gpuq_runlist_event& e, const ActiveHolder& h) {
  constexpr uint32_t kFilterByPasid = 3;  // KFD_UNMAP_QUEUES_FILTER_BY_PASID
  const bool own =
      e.hdr.process_key != 0 &&
      (h.process_key == e.hdr.process_key ||
       (h.keyed_by_tgid && e.hdr.tgid != 0 && h.tgid == e.hdr.tgid));
  if (e.filter == kFilterByPasid && !own) return 0;
  if (!own) return h.queues;
  switch (e.cause) {
    case GPUQ_CAUSE_DESTROY:  // one queue, off its list before the unmap
      return h.queues > 0 ? h.queues - 1 : 0;
    case GPUQ_CAUSE_EVICT:      // all made inactive before the unmap
    case GPUQ_CAUSE_TERMINATE:  // all off their lists before the unmap
      return 0;
    default:
      return h.queues;
  }
}

}  // namespace

PreemptionTracker::Window PreemptionTracker::Open(
    const PreemptionKey& key, const gpuq_runlist_event& e,
    std::map<PreemptionKey, PreemptionSeries>* out) const {
  ++(*out)[key].preemptions;
  if (preempted_sink_) preempted_sink_(key, e.hdr.cgroup_id);
  return {key, e.hdr.cgroup_id, EntryNs(e)};
}

void PreemptionTracker::Close(
    const Window& w, uint64_t end_ns,
    std::map<PreemptionKey, PreemptionSeries>* out) const {
  if (end_ns > w.start_ns) (*out)[w.key].off_ns += end_ns - w.start_ns;
  if (window_sink_)
    window_sink_(w.key, w.by_cgroup, w.start_ns, std::max(end_ns, w.start_ns));
}

void PreemptionTracker::OnHwsUnmap(
    const gpuq_runlist_event& e, const std::vector<ActiveHolder>& holders,
    std::map<PreemptionKey, PreemptionSeries>* out) {
  // Not seen yet (the agent started with a runlist up, or it was mapped
  // before): taken as mapped; the holders decide whether anything was on it.
  auto mapped = hws_mapped_.find(e.gpu_id);
  const bool was_mapped = mapped == hws_mapped_.end() || mapped->second;
  // Even a failed unmap (-ETIME: the scheduler hung) ends the runlist: the
  // GPU is reset and the next map uploads it again.
  hws_mapped_[e.gpu_id] = false;
  if (!was_mapped) return;
  std::map<uint64_t, uint32_t> off_per_cgroup;
  for (const ActiveHolder& h : holders) {
    const uint32_t n = QueuesTakenOff(e, h);
    if (n > 0) off_per_cgroup[h.cgroup_id] += n;
  }
  std::vector<Window>& open = hws_off_[e.gpu_id];
  for (const auto& [cgroup, n] : off_per_cgroup) {
    const PreemptionKey key{cgroup, e.gpu_id, Scheduler::kHws,
                            KnownRunlistCause(e.cause),
                            e.hdr.cgroup_id != 0 && e.hdr.cgroup_id == cgroup};
    open.push_back(Open(key, e, out));
  }
}

void PreemptionTracker::OnHwsMap(
    const gpuq_runlist_event& e,
    std::map<PreemptionKey, PreemptionSeries>* out) {
  // A failed map leaves the queues off; the windows stay open.
  if (e.ret != 0) return;
  // dqm->active_queue_count is not read in every tier: a successful map is
  // taken as mapping a runlist. When it had none (its early return on no
  // active queue), the next unmap finds no holder with a mapped queue
  // either, except a queue made inactive by an update (not tracked).
  hws_mapped_[e.gpu_id] = true;
  auto open = hws_off_.find(e.gpu_id);
  if (open == hws_off_.end()) return;
  for (const Window& w : open->second) Close(w, e.hdr.ts_ns, out);
  hws_off_.erase(open);
}

void PreemptionTracker::OnMesRemove(
    const gpuq_runlist_event& e, uint64_t owner_cgroup,
    std::map<PreemptionKey, PreemptionSeries>* out) {
  // Only an update's remove takes off a queue that stays; a failed remove
  // is not followed by the add.
  if (e.cause != GPUQ_CAUSE_UPDATE || e.ret != 0) return;
  const PreemptionKey key{
      owner_cgroup, e.gpu_id, Scheduler::kMes, GPUQ_CAUSE_UPDATE,
      e.hdr.cgroup_id != 0 && e.hdr.cgroup_id == owner_cgroup};
  const Window w = Open(key, e, out);
  if (mes_off_.size() >= kMaxMesWindows) return;
  mes_off_[{e.hdr.process_key, e.queue_id}] = w;
}

void PreemptionTracker::OnMesAdd(
    const gpuq_runlist_event& e,
    std::map<PreemptionKey, PreemptionSeries>* out) {
  // A failed add left the queue off the GPU: its window stays open.
  if (e.ret == 0) OnQueueGone(e.hdr.process_key, e.queue_id, e.hdr.ts_ns, out);
}

void PreemptionTracker::OnQueueGone(
    uint64_t process_key, uint32_t queue_id, uint64_t ts_ns,
    std::map<PreemptionKey, PreemptionSeries>* out) {
  auto open = mes_off_.find({process_key, queue_id});
  if (open == mes_off_.end()) return;
  Close(open->second, ts_ns, out);
  mes_off_.erase(open);
}

void PreemptionTracker::EraseCgroup(uint64_t cgroup_id) {
  for (auto& [gpu, windows] : hws_off_) {
    windows.erase(std::remove_if(windows.begin(), windows.end(),
                                 [&](const Window& w) {
                                   return w.key.cgroup_id == cgroup_id;
                                 }),
                  windows.end());
  }
  EraseIf(&mes_off_,
          [&](const auto& kv) { return kv.second.key.cgroup_id == cgroup_id; });
}

size_t PreemptionTracker::HeldOff() const {
  size_t n = mes_off_.size();
  for (const auto& [gpu, mapped] : hws_mapped_) n += mapped ? 0 : 1;
  return n;
}

}  // namespace gpuq
