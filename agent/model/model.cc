#include "model/model.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "common/erase_if.h"
#include "model/runlist_cause.h"
#include "model/write_index.h"
#include "sources/runtime_knobs.h"

namespace gpuq {
namespace {

// Kernel pointers live in the canonical upper half; a pid never does.
bool IsKernelKey(uint64_t process_key) { return process_key > 0xffffffffull; }

double Seconds(uint64_t ns) { return static_cast<double>(ns) / 1e9; }

}  // namespace

void Model::Apply(const Event& event) {
  const uint16_t type = Header(event).type;
  if (type < GPUQ_EV__MAX) ++series_.events_by_type[type];
  // One overload of On per alternative of Event (sources/event.h): a new
  // event type does not compile until the model says what it does with it.
  std::visit([this](const auto& e) { On(e); }, event);
}

ModelObserver& Model::Silent() {
  static ModelObserver silent;
  return silent;
}

void Model::SetObserver(ModelObserver* observer) {
  observer_ = observer;
  if (observer == nullptr) {
    preemption_.SetSinks({}, {});
    oversubscription_sink_ = {};
    return;
  }
  preemption_.SetSinks(
      [observer](const PreemptionKey& key, uint64_t by_cgroup) {
        observer->Preempted(key, by_cgroup);
      },
      [observer](const PreemptionKey& key, uint64_t by_cgroup,
                 uint64_t start_ns, uint64_t end_ns) {
        observer->PreemptionWindow(key, by_cgroup, start_ns, end_ns);
      });
  oversubscription_sink_ = [observer](uint32_t gpu_id, uint64_t start_ns,
                                      uint64_t end_ns,
                                      const RunlistShape& shape) {
    observer->OversubscribedWindow(gpu_id, start_ns, end_ns, shape);
  };
}

void Model::On(const gpuq_gpu_info_record& e) {
  series_.gpus[e.gpu_id] = FromRecord(e);
  gpu_records_[e.gpu_id] = e;
}

ProcessState& Model::ProcessFor(uint64_t process_key, uint32_t tgid,
                                uint64_t cgroup_id) {
  auto [it, inserted] = processes_.try_emplace(process_key);
  if (inserted) {
    if (!IsKernelKey(process_key)) ++seeded_processes_;
    it->second.process_key = process_key;
    it->second.tgid = tgid;
    it->second.cgroup_id = cgroup_id;
  }
  return it->second;
}

void Model::AdoptSeeded(uint64_t process_key, uint32_t tgid) {
  if (!IsKernelKey(process_key) || seeded_processes_ == 0) return;
  auto seeded = processes_.find(SeededProcessKey(tgid));
  if (seeded == processes_.end()) return;
  ProcessState moved = std::move(seeded->second);
  EraseProcess(seeded);
  for (const auto& [write_ptr, qid] : moved.queues) {
    auto node = queues_.extract(Key{SeededProcessKey(tgid), qid});
    if (node.empty()) continue;
    node.key() = Key{process_key, qid};
    node.mapped().process_key = process_key;
    // A queue a recording began with names its doorbell (a sysfs seed
    // never does): its owner entry follows the queue's new key.
    const QueueState& q = node.mapped();
    if (q.doorbell_handle != 0) {
      auto db = doorbells_.find({tgid, q.doorbell_handle});
      if (db != doorbells_.end() &&
          db->second.owner == Key{SeededProcessKey(tgid), qid}) {
        db->second.owner = node.key();
      }
    }
    queues_.insert(std::move(node));
  }
  ProcessState& target = ProcessFor(process_key, tgid, moved.cgroup_id);
  for (const auto& [gpu, n] : moved.queues_per_gpu) {
    target.queues_per_gpu[gpu] += n;
  }
  for (const auto& [write_ptr, qid] : moved.queues) {
    target.AddQueue(write_ptr, qid);
  }
  if (target.comm.empty()) target.comm = moved.comm;
}

void Model::On(const gpuq_queue_create_event& e) {
  const bool seeded =
      (e.flags & GPUQ_CREATE_F_SEEDED) != 0 || !IsKernelKey(e.hdr.process_key);
  uint64_t process_key = e.hdr.process_key;
  if (seeded) {
    // Join the process if it is already known by its kernel key (a queue
    // reconciliation found); otherwise key it by tgid until one shows up.
    process_key = SeededProcessKey(e.hdr.tgid);
    for (const auto& [key, p] : processes_) {
      if (p.tgid == e.hdr.tgid && IsKernelKey(key)) process_key = key;
    }
  } else {
    AdoptSeeded(process_key, e.hdr.tgid);
  }

  const Key key{process_key, e.queue_id};
  // The id is free again, so no destroy of a forgotten queue with this key
  // can still come (see Forget()).
  tombstones_.erase(key);
  tombstones_.erase(Key{SeededProcessKey(e.hdr.tgid), e.queue_id});
  // The new queue's node, filled below (a default QueueState until then; a
  // reference to it outlives the removals, an iterator a rehash may not).
  auto placed = queues_.try_emplace(key);
  if (!placed.second) {
    // The kernel never reuses a live queue id within a process: a second
    // create means a lost destroy. Replace the stale entry, count it.
    RemoveReplaced(key, e.hdr.ts_ns);
    placed = queues_.try_emplace(key);
  }
  QueueState& q = placed.first->second;
  // The new queue is in no process's list yet: only others are found.
  RemoveQueueAtSameAddress(process_key, e);
  if (!seeded) {
    auto mapped = created_unrecorded_.find({process_key, e.gpu_id});
    if (mapped != created_unrecorded_.end() && --mapped->second.queues == 0) {
      created_unrecorded_.erase(mapped);
    }
  }
  q.serial = ++queues_seen_;
  q.process_key = process_key;
  q.queue_id = e.queue_id;
  q.tgid = e.hdr.tgid;
  q.cgroup_id = e.hdr.cgroup_id;
  q.gpu_id = e.gpu_id;
  q.queue_type = e.queue_type;
  q.queue_format = e.queue_format;
  q.ring_address = e.ring_address;
  q.ring_size = e.ring_size;
  q.read_ptr = e.read_ptr;
  q.write_ptr = e.write_ptr;
  q.priority = e.priority;
  q.percentage = e.percentage;
  q.created_ns = e.hdr.ts_ns;
  q.seeded = seeded;
  q.flags = e.flags;
  q.doorbell_handle = e.doorbell_handle;
  q.write_index_at_create = e.write_index_at_create;
  Classify(q, +1);
  if (e.doorbell_handle != 0)
    doorbells_[{e.hdr.tgid, e.doorbell_handle}].owner = key;

  ProcessState& p = ProcessFor(process_key, e.hdr.tgid, e.hdr.cgroup_id);
  ++p.queues_per_gpu[e.gpu_id];
  p.AddQueue(e.write_ptr, e.queue_id);
  if (p.comm.empty()) p.comm = CommOf(e.comm);

  QueueSeries& s = SeriesOf(&q);
  ++s.live;
  if (q.CountedCreate()) ++s.creates;
  Touch(e.hdr.cgroup_id, e.hdr.tgid, +1, p.comm);
  Tell().QueueAdded(q);
}

void Model::Touch(uint64_t cgroup_id, uint32_t tgid, int live_delta,
                  const std::string& comm) {
  OwnerActivity& a = owners_[{cgroup_id, tgid}];
  a.last_change_ns = now_ns_;
  if (live_delta > 0) ++a.live;
  if (live_delta < 0 && a.live > 0) --a.live;
  if (a.comm.empty()) a.comm = comm;
}

QueueSeries* Model::Remove(const Key& key, QueueState* removed) {
  auto node = queues_.extract(key);
  if (node.empty()) return nullptr;
  QueueState& q = node.mapped();
  Classify(q, -1);
  auto db = doorbells_.find({q.tgid, q.doorbell_handle});
  if (db != doorbells_.end() && db->second.owner == key) {
    // Rings between the last poll of the doorbell map and this destroy are
    // polled later: they still belong to this queue's GPU and container.
    Doorbell& d = db->second;
    d.owner.reset();
    d.kept = true;
    d.gpu_id = q.gpu_id;
    d.cgroup_id = q.cgroup_id;
  }

  auto p = processes_.find(q.process_key);
  if (p != processes_.end()) {
    auto gpu = p->second.queues_per_gpu.find(q.gpu_id);
    if (gpu != p->second.queues_per_gpu.end() && --gpu->second == 0) {
      p->second.queues_per_gpu.erase(gpu);
    }
    p->second.RemoveQueue(q.write_ptr, q.queue_id);
    // A process is tracked while it holds queues; its exit marker may come
    // before the kworker frees them, so it stays until the last one goes.
    if (p->second.queues.empty()) EraseProcess(p);
  }
  QueueSeries& s = SeriesOf(&q);
  if (s.live > 0) --s.live;
  Touch(q.cgroup_id, q.tgid, -1, "");
  if (removed != nullptr) *removed = std::move(node.mapped());
  return &s;
}

void Model::EraseProcess(
    std::unordered_map<uint64_t, ProcessState>::iterator it) {
  if (!IsKernelKey(it->first)) --seeded_processes_;
  processes_.erase(it);
}

void Model::On(const gpuq_queue_destroy_event& e) {
  if ((e.flags & GPUQ_DESTROY_F_RECOVERED) != 0) {
    Forget(e);
    return;
  }
  AdoptSeeded(e.hdr.process_key, e.hdr.tgid);
  QueueState q;
  QueueSeries* series = Remove(Key{e.hdr.process_key, e.queue_id}, &q);
  if (series == nullptr) {
    // A queue seeded from sysfs whose owner we never saw by kernel key.
    series = Remove(Key{SeededProcessKey(e.hdr.tgid), e.queue_id}, &q);
  }
  // Reconciliation removed it already (and said so).
  const bool live = series != nullptr;
  if (!live) {
    if (!TakeTombstone(e, &q)) {
      ++series_.model_drops.unknown_queue;
      return;
    }
    series = &SeriesFor({q.cgroup_id, q.tgid, q.gpu_id, q.queue_type});
  }
  preemption_.OnQueueGone(e.hdr.process_key, q.queue_id, e.hdr.ts_ns,
                          &series_.preemptions);
  const uint32_t reason = e.reason < GPUQ_DESTROY__MAX ? e.reason : 0;
  // Counted under the labels the queue was created with, like its gauge.
  QueueSeries& s = *series;
  if (!q.destroy_counted) ++s.destroys[reason];
  // The owner's last word on a ROCr queue: what it wrote after the
  // sampler's last read (gone with the queue's memory otherwise).
  if ((e.flags & GPUQ_DESTROY_F_WRITE_INDEX) != 0 &&
      (q.flags & GPUQ_CREATE_F_ROCR_LAYOUT) != 0) {
    const uint64_t packets =
        StepWriteIndex(q.sampled, true, q.write_index, q.write_index_at_create,
                       e.write_index)
            .packets;
    s.submissions += packets;
    Tell().QueueLastWords(q, packets);
  }
  if (live) {
    Tell().QueueRemoved(q, e.hdr.ts_ns, {QueueEnd::How::kDestroyed, reason});
  }
}

void Model::On(const gpuq_queue_update_event& e) {
  AdoptSeeded(e.hdr.process_key, e.hdr.tgid);
  QueueState* q = FindQueue(e.hdr.process_key, e.hdr.tgid, e.queue_id);
  if (q == nullptr) {
    ++series_.model_drops.unknown_queue;
    return;
  }
  // As amdkfd keeps it: the low byte is the percentage; bits 8-15 name a
  // PM4 queue's target XCC on 6.12 (docs/kfd-probe-points.md, section 4).
  Reclassify(q, [&] {
    q->ring_address = e.ring_address;
    q->ring_size = e.ring_size;
    q->percentage = e.percentage & 0xffu;
    q->priority = e.priority;
    q->updated = true;
  });
}

void Model::On(const gpuq_queue_cu_mask_event& e) {
  AdoptSeeded(e.hdr.process_key, e.hdr.tgid);
  QueueState* q = FindQueue(e.hdr.process_key, e.hdr.tgid, e.queue_id);
  if (q == nullptr) {
    ++series_.model_drops.unknown_queue;
    return;
  }
  auto gpu = series_.gpus.find(q->gpu_id);
  Reclassify(q, [&] {
    q->cu_mask = ClassifyCuMask(
        e, gpu != series_.gpus.end() ? gpu->second.ActiveCus() : 0);
  });
  q->cu_mask_record = std::make_shared<const gpuq_queue_cu_mask_event>(e);
}

void Model::On(const gpuq_process_knobs_record& e) {
  // Read while the process held queues; one gone since has no row to label.
  auto p = processes_.find(e.hdr.process_key);
  if (p != processes_.end()) p->second.knobs = e;
}

void Model::On(const gpuq_process_exit_event& e) {
  ++series_.process_exits[e.hdr.cgroup_id];
  Touch(e.hdr.cgroup_id, e.hdr.tgid, 0, CommOf(e.comm));
  AdoptSeeded(e.hdr.process_key, e.hdr.tgid);
  auto p = processes_.find(e.hdr.process_key);
  if (p != processes_.end()) p->second.exited = true;
  // An exited process is never restored: its evictions stop counting as
  // current (no duration is observed).
  auto pending = pending_evictions_.lower_bound({e.hdr.process_key, 0});
  while (pending != pending_evictions_.end() &&
         pending->first.first == e.hdr.process_key) {
    Tell().EvictionEnded(pending->second, e.hdr.ts_ns, /*restored=*/false);
    pending = pending_evictions_.erase(pending);
  }
  // Nor does a create record of a process that is gone come any more.
  EraseIf(&created_unrecorded_,
          [&](const auto& kv) { return kv.first.first == e.hdr.process_key; });
}

void Model::On(const gpuq_queue_create_failed_event& e) {
  ++series_.create_failures[{e.hdr.cgroup_id, e.gpu_id, e.error}];
  Touch(e.hdr.cgroup_id, e.hdr.tgid, 0, CommOf(e.comm));
}

size_t Model::RetireIdleOwners(uint64_t grace_ns) {
  size_t folded = 0;
  // Each folded owner's last change, for its cgroup's remainder (tgid 0):
  // stamped after the walk, as an insert may rehash owners_.
  std::vector<std::pair<uint64_t, uint64_t>> remainders;
  for (auto it = owners_.begin(); it != owners_.end();) {
    const auto [cgroup, tgid] = it->first;
    const OwnerActivity& a = it->second;
    if (tgid == 0 || a.live > 0 || now_ns_ - a.last_change_ns < grace_ns) {
      ++it;
      continue;
    }
    // Move the owner's counters into the cgroup's remainder (tgid 0).
    auto s = series_.queue_series.lower_bound({cgroup, tgid, 0, 0});
    while (s != series_.queue_series.end() && s->first.cgroup_id == cgroup &&
           s->first.tgid == tgid) {
      QueueSeries& rest =
          series_
              .queue_series[{cgroup, 0, s->first.gpu_id, s->first.queue_type}];
      rest.creates += s->second.creates;
      rest.submissions += s->second.submissions;
      for (size_t r = 0; r < rest.destroys.size(); ++r) {
        rest.destroys[r] += s->second.destroys[r];
      }
      s = series_.queue_series.erase(s);
    }
    remainders.emplace_back(cgroup, a.last_change_ns);
    it = owners_.erase(it);
    ++folded;
  }
  if (folded > 0) ForgetSeriesIndex();  // it held the erased series
  for (const auto& [cgroup, last_change_ns] : remainders) {
    OwnerActivity& remainder = owners_[{cgroup, 0}];
    remainder.last_change_ns =
        std::max(remainder.last_change_ns, last_change_ns);
  }
  return folded;
}

std::map<uint64_t, uint64_t> Model::IdleCgroups(uint64_t grace_ns) const {
  std::map<uint64_t, uint64_t> last;  // cgroup -> last change
  std::set<uint64_t> busy;
  for (const auto& [key, a] : owners_) {
    uint64_t& l = last[key.first];
    l = std::max(l, a.last_change_ns);
    if (a.live > 0) busy.insert(key.first);
  }
  std::map<uint64_t, uint64_t> idle;
  for (const auto& [cgroup, l] : last) {
    if (busy.count(cgroup) == 0 && now_ns_ - l >= grace_ns) idle[cgroup] = l;
  }
  return idle;
}

QueueSeries& Model::SeriesFor(const QueueSeriesKey& key) {
  auto [it, inserted] = series_index_.try_emplace(key, nullptr);
  if (inserted) it->second = &series_.queue_series[key];
  return *it->second;
}

QueueSeries& Model::SeriesOf(QueueState* q) {
  if (q->series_generation != series_generation_) {
    q->series = &SeriesFor({q->cgroup_id, q->tgid, q->gpu_id, q->queue_type});
    q->series_generation = series_generation_;
  }
  return *q->series;
}

void Model::ForgetSeriesIndex() {
  series_index_.clear();
  ++series_generation_;
}

void Model::EraseCgroup(uint64_t cgroup_id) {
  series_.EraseCgroup(cgroup_id);
  ForgetSeriesIndex();
  preemption_.EraseCgroup(cgroup_id);
  for (auto db = doorbells_.begin(); db != doorbells_.end();) {
    Doorbell& d = db->second;
    if (!d.kept || d.cgroup_id != cgroup_id) {
      ++db;
    } else if (d.owner) {
      // A live queue's: only what was kept goes.
      const Key owner = *d.owner;
      d = Doorbell{};
      d.owner = owner;
      ++db;
    } else {
      db = doorbells_.erase(db);
    }
  }
  EraseIf(&pending_evictions_,
          [&](const auto& kv) { return kv.second.cgroup_id == cgroup_id; });
  EraseIf(&created_unrecorded_,
          [&](const auto& kv) { return kv.second.cgroup_id == cgroup_id; });
  EraseIf(&owners_,
          [&](const auto& kv) { return kv.first.first == cgroup_id; });
  // A late destroy of a gone container's queue must not bring its series
  // back: it becomes an unknown_queue drop instead.
  EraseIf(&tombstones_,
          [&](const auto& kv) { return kv.second.cgroup_id == cgroup_id; });
}

ReconcileDiff Model::Diff(const std::vector<SysfsQueue>& sysfs) const {
  // Queue ids are unique per KFD context, and a process may have secondary
  // contexts (7.2+) whose kernel identity sysfs does not show: (pid, queue
  // id) pairs are compared as counts. The model's queues beyond sysfs's
  // count are missing there; sysfs's primary-context queues beyond the
  // model's count are missing in the model. A secondary context's queue is
  // never seeded (docs/probe-tiers.md, "Secondary contexts"): it only keeps
  // the model's queue of the same pair alive.
  ReconcileDiff diff;
  std::map<std::pair<uint32_t, uint32_t>, size_t> in_sysfs;
  for (const SysfsQueue& s : sysfs) {
    ++in_sysfs[{s.pid, s.queue_id}];
    --diff.drift_per_gpu[s.gpu_id];
  }
  std::map<std::pair<uint32_t, uint32_t>, size_t> in_model;
  for (const auto& [key, q] : queues_) {
    ++diff.drift_per_gpu[q.gpu_id];
    const std::pair<uint32_t, uint32_t> id{q.tgid, q.queue_id};
    const auto found = in_sysfs.find(id);
    if (++in_model[id] > (found == in_sysfs.end() ? 0 : found->second)) {
      diff.missing_in_sysfs.push_back(q);
    }
  }
  std::map<std::pair<uint32_t, uint32_t>, size_t> seen;
  for (const SysfsQueue& s : sysfs) {
    const std::pair<uint32_t, uint32_t> id{s.pid, s.queue_id};
    const auto found = in_model.find(id);
    if (++seen[id] > (found == in_model.end() ? 0 : found->second) &&
        s.context == kPrimaryContext) {
      diff.missing_in_model.push_back(s);
    }
  }
  return diff;
}

void Model::RemoveQueueAtSameAddress(uint64_t process_key,
                                     const gpuq_queue_create_event& e) {
  if ((e.flags & GPUQ_CREATE_F_ROCR_LAYOUT) == 0 || e.write_ptr == 0) return;
  auto p = processes_.find(process_key);
  if (p == processes_.end()) return;
  const auto& at = p->second.queues;
  for (auto it = std::lower_bound(
           at.begin(), at.end(), std::pair<uint64_t, uint32_t>{e.write_ptr, 0});
       it != at.end() && it->first == e.write_ptr; ++it) {
    const uint32_t qid = it->second;
    auto q = queues_.find(Key{process_key, qid});
    if (q == queues_.end() || qid == e.queue_id ||
        q->second.write_ptr != e.write_ptr) {
      continue;
    }
    // One amd_queue_t holds one live ROCr queue: records arrive in the
    // order the kernel made them, so a queue still live at the address a
    // new one of its process now uses lost its destroy (a program the
    // kernel skipped). Sampled on, it would count the new queue's packets
    // a second time (its index "went back", then grew again).
    const Key stale = q->first;  // Remove() erases the node q points at
    RemoveReplaced(stale, e.hdr.ts_ns);
    return;
  }
}

void Model::RemoveReplaced(const Key& key, uint64_t ts_ns) {
  ++series_.model_drops.duplicate_create;
  QueueState stale;
  if (Remove(key, &stale) != nullptr) {
    Tell().QueueRemoved(stale, ts_ns, {QueueEnd::How::kReplaced});
  }
}

void Model::Forget(const gpuq_queue_destroy_event& e) {
  // The model's own key of the queue (what reconciliation writes), else the
  // tgid's seeded key, as a kernel destroy finds a seeded queue.
  Key key{e.hdr.process_key, e.queue_id};
  QueueState q;
  QueueSeries* series = Remove(key, &q);
  if (series == nullptr) {
    key = Key{SeededProcessKey(e.hdr.tgid), e.queue_id};
    series = Remove(key, &q);
    if (series == nullptr) return;
  }
  Tell().QueueRemoved(q, e.hdr.ts_ns, {QueueEnd::How::kReconciled});
  ++series->destroys[GPUQ_DESTROY_UNKNOWN];
  q.destroy_counted = true;
  tombstones_[key] = q;
  tombstone_order_.push_back(key);
  while (tombstones_.size() > kMaxTombstones && !tombstone_order_.empty()) {
    tombstones_.erase(tombstone_order_.front());
    tombstone_order_.pop_front();
  }
  // Keys whose tombstone is gone (destroy arrived, id reused) are skipped
  // above; trim them so the order list stays bounded too.
  if (tombstone_order_.size() > 2 * kMaxTombstones) {
    std::deque<Key> live;
    for (const Key& k : tombstone_order_) {
      if (tombstones_.count(k) != 0) live.push_back(k);
    }
    tombstone_order_ = std::move(live);
  }
}

bool Model::TakeTombstone(const gpuq_queue_destroy_event& e,
                          QueueState* removed) {
  for (const Key& key : {Key{e.hdr.process_key, e.queue_id},
                         Key{SeededProcessKey(e.hdr.tgid), e.queue_id}}) {
    auto it = tombstones_.find(key);
    if (it == tombstones_.end()) continue;
    *removed = it->second;
    tombstones_.erase(it);
    return true;
  }
  return false;
}

QueueState* Model::FindQueue(uint64_t process_key, uint32_t tgid,
                             uint32_t queue_id) {
  auto it = queues_.find(Key{process_key, queue_id});
  if (it == queues_.end())
    it = queues_.find(Key{SeededProcessKey(tgid), queue_id});
  return it == queues_.end() ? nullptr : &it->second;
}

void Model::On(const gpuq_queue_sample_record& e) {
  QueueState* q = FindQueue(e.hdr.process_key, e.hdr.tgid, e.queue_id);
  if (q == nullptr) {
    // Destroyed between the sampler's read and this record: normal.
    ++series_.sample_stats.unknown_queue;
    return;
  }
  if (!SampleReadsQueue({e.write_ptr, e.read_begin_ns},
                        {q->write_ptr, q->created_ns})) {
    // Read at the address of a queue destroyed since, or before this queue
    // of the same queue_id was made: not this queue's index.
    ++series_.sample_stats.unknown_queue;
    return;
  }
  if ((e.flags & GPUQ_SAMPLE_F_UNREADABLE) != 0) {
    ++((e.flags & GPUQ_SAMPLE_F_DENIED) != 0 ? series_.sample_stats.denied
                                             : series_.sample_stats.unreadable);
    Reclassify(q, [q] { q->last_read = QueueState::LastRead::kFailed; });
    Tell().QueueSampled(*q, 0);
    return;
  }
  const WriteIndexStep step =
      StepWriteIndex(q->sampled, (q->flags & GPUQ_CREATE_F_ROCR_LAYOUT) != 0,
                     q->write_index, q->write_index_at_create, e.write_index);
  const uint64_t delta = step.packets;
  ++(step.reset ? series_.sample_stats.reset : series_.sample_stats.ok);
  if (q->sampled && !step.reset) {
    q->rate_packets = delta;
    q->rate_ns = e.hdr.ts_ns > q->sample_ns ? e.hdr.ts_ns - q->sample_ns : 0;
  } else {
    q->rate_ns = 0;
  }
  q->sampled = true;
  Reclassify(q, [q] { q->last_read = QueueState::LastRead::kOk; });
  q->write_index = e.write_index;
  q->read_index = e.read_index;
  q->sample_ns = e.hdr.ts_ns;
  SeriesOf(q).submissions += delta;
  Tell().QueueSampled(*q, delta);
}

void Model::On(const gpuq_doorbell_count_record& e) {
  uint32_t gpu_id = e.gpu_id;
  uint64_t cgroup_id = e.hdr.cgroup_id;
  auto db = doorbells_.find({e.hdr.tgid, e.doorbell_handle});
  if (db != doorbells_.end() && db->second.owner) {
    const QueueState& q = queues_.at(*db->second.owner);
    if (gpu_id == 0) gpu_id = q.gpu_id;
    if (cgroup_id == 0) cgroup_id = q.cgroup_id;
  } else if (db != doorbells_.end() && db->second.kept) {
    // The queue is gone (Remove kept its GPU); these are its last rings.
    if (gpu_id == 0) gpu_id = db->second.gpu_id;
    if (cgroup_id == 0) cgroup_id = db->second.cgroup_id;
  }
  if (cgroup_id == 0) {
    ++series_.model_drops.no_owner;
    return;
  }
  if (db == doorbells_.end()) {
    db = doorbells_.try_emplace({e.hdr.tgid, e.doorbell_handle}).first;
  }
  Doorbell& last = db->second;
  const DoorbellTally now = DoorbellTally::Of(e);
  if (now.FellBelow(last.counts)) last.counts = DoorbellTally{};
  series_.doorbells[{cgroup_id, gpu_id}] += now.Since(last.counts);
  last.kept = true;
  last.cgroup_id = cgroup_id;
  last.counts = now;
  Touch(cgroup_id, e.hdr.tgid, 0, "");
}

void Model::On(const gpuq_runlist_event& e) {
  if (e.op >= GPUQ_RUNLIST_OP__MAX) return;  // counted in events_total only
  const Scheduler sched =
      e.op == GPUQ_RUNLIST_MES_ADD || e.op == GPUQ_RUNLIST_MES_REMOVE
          ? Scheduler::kMes
          : Scheduler::kHws;
  const bool unmap =
      e.op == GPUQ_RUNLIST_UNMAP || e.op == GPUQ_RUNLIST_MES_REMOVE;
  // A MES op on a queue created before the agent started: the kernel side
  // knows no GPU for it (not in its live map), the seeded queue does.
  uint32_t gpu_id = e.gpu_id;
  if (gpu_id == 0 && sched == Scheduler::kMes) {
    if (const QueueState* q =
            FindQueue(e.hdr.process_key, e.hdr.tgid, e.queue_id)) {
      gpu_id = q->gpu_id;
    }
  }
  // Victims first: the model's queues are as they were before the
  // operation's own record (written at its return) arrives.
  gpuq_runlist_event on_gpu = e;
  on_gpu.gpu_id = gpu_id;
  switch (e.op) {
    case GPUQ_RUNLIST_UNMAP:
      preemption_.OnHwsUnmap(on_gpu, ActiveHolders(gpu_id),
                             &series_.preemptions);
      break;
    case GPUQ_RUNLIST_MAP:
      preemption_.OnHwsMap(on_gpu, &series_.preemptions);
      if (e.ret == 0 && e.cause == GPUQ_CAUSE_CREATE &&
          IsKernelKey(e.hdr.process_key) && gpu_id != 0) {
        CreatedUnrecorded& c = created_unrecorded_[{e.hdr.process_key, gpu_id}];
        c.tgid = e.hdr.tgid;
        c.cgroup_id = e.hdr.cgroup_id;
        c.queues = std::min(c.queues + 1, kMaxQueuesPerProcess);
      }
      break;
    case GPUQ_RUNLIST_MES_REMOVE: {
      const QueueState* q =
          FindQueue(e.hdr.process_key, e.hdr.tgid, e.queue_id);
      preemption_.OnMesRemove(on_gpu,
                              q != nullptr ? q->cgroup_id : e.hdr.cgroup_id,
                              &series_.preemptions);
      break;
    }
    default:
      preemption_.OnMesAdd(on_gpu, &series_.preemptions);
      break;
  }
  OnRunlistForOversubscription(on_gpu, &series_.oversubscription,
                               oversubscription_sink_);
  RunlistSeries& s = series_.runlist[{gpu_id, sched}];
  // A failed operation is observed too: an -ETIME unmap is the 9 s tail.
  if (unmap) {
    ++s.unmaps_by_filter[sched == Scheduler::kMes ? 0 : e.filter];
    s.unmap.Observe(RunlistBuckets(), Seconds(e.duration_ns));
  } else {
    s.map.Observe(RunlistBuckets(), Seconds(e.duration_ns));
  }
  if (e.ret != 0) ++series_.runlist_failures[{gpu_id, sched, unmap, e.ret}];
  Tell().RunlistApplied(on_gpu);
  // Operations of unknown cause (reset, suspend) belong to no container.
  if (e.hdr.cgroup_id == 0) return;
  const uint32_t cause = KnownRunlistCause(e.cause);
  ++series_.runlist_causes[{e.hdr.cgroup_id, gpu_id, sched, unmap, cause}];
  Touch(e.hdr.cgroup_id, e.hdr.tgid, 0, "");
}

std::vector<ActiveHolder> Model::ActiveHolders(uint32_t gpu_id) const {
  std::map<uint64_t, ActiveHolder> by_process;
  for (const auto& [key, q] : queues_) {
    if (q.gpu_id != gpu_id) continue;
    // amdkfd's is_active: a ring and a non-zero percentage
    // (QUEUE_IS_ACTIVE), from the create or the last update; a seeded
    // queue's are not known until an update: taken as active.
    const bool active =
        (q.seeded && !q.updated) ||
        (q.ring_size > 0 && q.ring_address != 0 && q.percentage > 0);
    if (!active || pending_evictions_.count({q.process_key, gpu_id}) != 0)
      continue;
    ActiveHolder& h = by_process[q.process_key];
    h.process_key = q.process_key;
    h.tgid = q.tgid;
    h.keyed_by_tgid = !IsKernelKey(q.process_key);
    h.cgroup_id = q.cgroup_id;
    ++h.queues;
  }
  // Mapped by their creates, their records still to come.
  for (const auto& [key, c] : created_unrecorded_) {
    if (key.second != gpu_id || pending_evictions_.count(key) != 0) continue;
    ActiveHolder& h = by_process[key.first];
    h.process_key = key.first;
    h.tgid = c.tgid;
    h.cgroup_id = c.cgroup_id;
    h.queues += c.queues;
  }
  std::vector<ActiveHolder> out;
  out.reserve(by_process.size());
  for (const auto& [key, h] : by_process) out.push_back(h);
  return out;
}

void Model::On(const gpuq_eviction_event& e) {
  if (e.hdr.cgroup_id == 0) {
    ++series_.model_drops.no_owner;
    return;
  }
  // The record names the owner (tgid and kfd_process), so queues seeded
  // from sysfs are its from here: an evicted process's queues are evicted.
  AdoptSeeded(e.hdr.process_key, e.hdr.tgid);
  const std::pair<uint64_t, uint32_t> key{e.hdr.process_key, e.gpu_id};
  if (e.kind == GPUQ_EVICTION_EVICT) {
    const uint32_t trigger = e.trigger < GPUQ_TRIGGER__KNOWN
                                 ? e.trigger
                                 : uint32_t{GPUQ_TRIGGER_UNKNOWN};
    ++series_.evictions[{e.hdr.cgroup_id, e.gpu_id, trigger}].evictions;
    EvictionNotice n;
    n.process_key = e.hdr.process_key;
    n.tgid = e.hdr.tgid;
    n.cgroup_id = e.hdr.cgroup_id;
    n.gpu_id = e.gpu_id;
    n.trigger = trigger;
    n.evict_ns = e.hdr.ts_ns;
    n.serial = ++evictions_seen_;
    // Only transitions are recorded; keep the first if one was missed.
    const bool opened = pending_evictions_.try_emplace(key, n).second;
    Tell().Evicted(n, opened);
  } else if (e.kind == GPUQ_EVICTION_RESTORE) {
    ++series_.restores[{e.hdr.cgroup_id, e.gpu_id}];
    auto pending = pending_evictions_.find(key);
    if (pending != pending_evictions_.end()) {
      const EvictionNotice& p = pending->second;
      const uint64_t ns =
          e.hdr.ts_ns > p.evict_ns ? e.hdr.ts_ns - p.evict_ns : 0;
      series_.evictions[{p.cgroup_id, e.gpu_id, p.trigger}].duration.Observe(
          EvictionBuckets(), Seconds(ns));
      Tell().EvictionEnded(p, e.hdr.ts_ns, /*restored=*/true);
      pending_evictions_.erase(pending);
    }
  }
  Touch(e.hdr.cgroup_id, e.hdr.tgid, 0, "");
}

std::vector<SampleTarget> Model::SampleTargets() const {
  std::vector<SampleTarget> out;
  for (const auto& [key, q] : queues_) {
    // Read again after a failed read: an unreadable queue may become
    // readable (the owner's memory was mid-change, privileges granted).
    if (UnsampledReasonOf(q.seeded, q.flags, q.write_ptr, q.read_ptr,
                          /*read_failed=*/false)) {
      continue;
    }
    SampleTarget t;
    t.owner.tgid = q.tgid;
    t.owner.cgroup_id = q.cgroup_id;
    t.owner.process_key = q.process_key;
    t.gpu_id = q.gpu_id;
    t.queue_id = q.queue_id;
    t.write_ptr = q.write_ptr;
    t.read_ptr = q.read_ptr;
    out.push_back(t);
  }
  std::sort(out.begin(), out.end(),
            [](const SampleTarget& a, const SampleTarget& b) {
              return std::tie(a.owner.tgid, a.queue_id) <
                     std::tie(b.owner.tgid, b.queue_id);
            });
  return out;
}

std::optional<DoorbellOwner> Model::FindDoorbell(uint32_t tgid,
                                                 uint64_t handle) const {
  auto it = doorbells_.find({tgid, handle});
  if (it == doorbells_.end() || !it->second.owner) return std::nullopt;
  const QueueState& q = queues_.at(*it->second.owner);
  DoorbellOwner o;
  o.owner.tgid = q.tgid;
  o.owner.cgroup_id = q.cgroup_id;
  o.owner.process_key = q.process_key;
  o.gpu_id = q.gpu_id;
  o.queue_id = q.queue_id;
  return o;
}

std::vector<std::pair<uint32_t, uint64_t>> Model::KnownDoorbells() const {
  std::vector<std::pair<uint32_t, uint64_t>> out;
  for (const auto& [key, doorbell] : doorbells_) {
    if (doorbell.owner) out.push_back(key);
  }
  std::sort(out.begin(), out.end());  // the map is hashed
  return out;
}

std::map<std::pair<uint64_t, uint32_t>, uint64_t> Model::PendingPackets()
    const {
  std::map<std::pair<uint64_t, uint32_t>, uint64_t> out;
  for (const auto& [key, q] : queues_) {
    if (q.readable()) out[{q.cgroup_id, q.gpu_id}] += q.pending();
  }
  return out;
}

size_t Model::SampledQueues() const {
  size_t n = 0;
  for (const auto& [key, q] : queues_) n += q.readable() ? 1 : 0;
  return n;
}

std::map<uint64_t, std::map<uint32_t, double>> Model::SubmissionRates() const {
  std::map<uint64_t, std::map<uint32_t, double>> out;
  for (const auto& [key, q] : queues_) {
    if (q.rate_ns == 0 || !q.readable()) continue;
    out[q.process_key][q.gpu_id] +=
        static_cast<double>(q.rate_packets) / Seconds(q.rate_ns);
  }
  return out;
}

std::map<std::pair<uint64_t, uint32_t>, uint64_t> Model::EvictedProcesses()
    const {
  std::map<std::pair<uint64_t, uint32_t>, uint64_t> out;
  for (const auto& [key, p] : pending_evictions_) {
    ++out[{p.cgroup_id, key.second}];
  }
  return out;
}

namespace {

// One more, or one fewer, in `count`.
void Step(uint64_t* count, int delta) {
  if (delta > 0) {
    ++*count;
  } else if (*count > 0) {
    --*count;
  }
}

// Sets sorted[{cgroup, gpu, class}] for each class counted in `counts`
// (none left: no entry, as a walk over the queues would leave).
template <class Sorted, size_t N>
void AddCounts(Sorted* sorted, uint64_t cgroup_id, uint32_t gpu_id,
               const std::array<uint64_t, N>& counts) {
  using Class = std::tuple_element_t<2, typename Sorted::key_type>;
  for (size_t i = 0; i < N; ++i) {
    if (counts[i] != 0) {
      (*sorted)[{cgroup_id, gpu_id, static_cast<Class>(i)}] = counts[i];
    }
  }
}

}  // namespace

QueueClasses Model::ClassesOf(const QueueState& q) {
  QueueClasses c;
  c.cgroup_id = q.cgroup_id;
  c.gpu_id = q.gpu_id;
  // sysfs shows no priority: a seeded queue's is known once updated
  const bool priority_known = !q.seeded || q.updated;
  c.priority =
      priority_known ? PriorityClassOf(q.priority) : PriorityClass::kUnknown;
  c.requested_priority = priority_known
                             ? std::min(q.priority, kUnknownQueuePriority)
                             : kUnknownQueuePriority;
  c.cu_mask = q.cu_mask;
  if (q.queue_type == GPUQ_QUEUE_COMPUTE) {  // others are never sampled
    c.unsampled =
        UnsampledReasonOf(q.seeded, q.flags, q.write_ptr, q.read_ptr,
                          q.last_read == QueueState::LastRead::kFailed);
  }
  return c;
}

void Model::Classify(const QueueState& q, int delta) {
  StepClasses(ClassesOf(q), delta);
}

void Model::StepClasses(const QueueClasses& c, int delta) {
  const auto node = classes_.try_emplace({c.cgroup_id, c.gpu_id}).first;
  ClassCounts& n = node->second;
  Step(&n.queues, delta);
  Step(&n.by_priority[static_cast<size_t>(c.priority)], delta);
  Step(&n.by_requested_priority[std::min(c.requested_priority,
                                         kUnknownQueuePriority)],
       delta);
  if (c.cu_mask) Step(&n.cu_masked[static_cast<size_t>(*c.cu_mask)], delta);
  if (c.unsampled) {
    Step(&n.unsampled[static_cast<size_t>(*c.unsampled)], delta);
  }
  if (n.queues == 0) classes_.erase(node);
  Tell().QueueClassified(c, delta);
}

void Model::AddQueueClasses(ModelSeries* s) const {
  s->queues_by_priority.clear();
  s->queues_by_requested_priority.clear();
  s->queues_cu_masked.clear();
  s->unsampled_queues.clear();
  for (const auto& [key, n] : classes_) {
    const auto [cgroup_id, gpu_id] = key;
    AddCounts(&s->queues_by_priority, cgroup_id, gpu_id, n.by_priority);
    AddCounts(&s->queues_by_requested_priority, cgroup_id, gpu_id,
              n.by_requested_priority);
    AddCounts(&s->queues_cu_masked, cgroup_id, gpu_id, n.cu_masked);
    AddCounts(&s->unsampled_queues, cgroup_id, gpu_id, n.unsampled);
  }
}

ModelSeries Model::Series() const {
  ModelSeries s = series_;
  s.pending_packets = PendingPackets();
  s.sampled_queues = SampledQueues();
  s.evicted = EvictedProcesses();
  AddQueueClasses(&s);
  for (const auto& [key, q] : queues_) {
    if (pending_evictions_.count({q.process_key, q.gpu_id}) != 0) {
      ++s.queues_evicted[{q.cgroup_id, q.gpu_id}];
    }
  }
  const auto rates = SubmissionRates();
  for (const auto& [key, p] : processes_) {
    for (const auto& [gpu, n] : p.queues_per_gpu) {
      if (n > 0) ++s.processes[{p.cgroup_id, gpu}];
    }
    auto rate = rates.find(key);
    s.process_rows.push_back(
        {p.tgid, p.comm, p.cgroup_id, p.exited, p.queues_per_gpu,
         rate != rates.end() ? rate->second : std::map<uint32_t, double>{},
         p.knobs ? std::optional<std::string>(RuntimeKnobsLabel(*p.knobs))
                 : std::nullopt});
  }
  std::sort(s.process_rows.begin(), s.process_rows.end(),
            [](const ProcessRow& a, const ProcessRow& b) {
              return std::tie(a.cgroup_id, a.pid) <
                     std::tie(b.cgroup_id, b.pid);
            });
  return s;
}

}  // namespace gpuq
