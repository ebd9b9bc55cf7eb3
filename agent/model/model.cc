#include "model/model.h"

#include <algorithm>
#include <iterator>
#include <type_traits>
#include <utility>

namespace gpuq {
namespace {

// Kernel pointers live in the canonical upper half; a pid never does.
bool IsKernelKey(uint64_t process_key) { return process_key > 0xffffffffull; }

std::string CommOf(const char (&comm)[GPUQ_COMM_LEN]) {
  size_t n = 0;
  while (n < GPUQ_COMM_LEN && comm[n] != '\0') ++n;
  return std::string(comm, n);
}

}  // namespace

void Model::Apply(const Event& event) {
  const uint16_t type = Header(event).type;
  if (type < GPUQ_EV__MAX) ++events_by_type_[type];
  std::visit(
      [this](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, gpuq_queue_create_event>) {
          OnCreate(e);
        } else if constexpr (std::is_same_v<T, gpuq_queue_destroy_event>) {
          OnDestroy(e);
        } else if constexpr (std::is_same_v<T, gpuq_process_exit_event>) {
          OnProcessExit(e);
        } else if constexpr (std::is_same_v<T,
                                            gpuq_queue_create_failed_event>) {
          OnCreateFailed(e);
        } else if constexpr (std::is_same_v<T, gpuq_gpu_info_record>) {
          gpus_[e.gpu_id] = FromRecord(e);
        }
      },
      event);
}

ProcessState& Model::ProcessFor(uint64_t process_key, uint32_t tgid,
                                uint64_t cgroup_id) {
  auto [it, inserted] = processes_.try_emplace(process_key);
  if (inserted) {
    it->second.process_key = process_key;
    it->second.tgid = tgid;
    it->second.cgroup_id = cgroup_id;
  }
  return it->second;
}

void Model::AdoptSeeded(uint64_t process_key, uint32_t tgid) {
  if (!IsKernelKey(process_key)) return;
  auto seeded = processes_.find(SeededProcessKey(tgid));
  if (seeded == processes_.end()) return;
  ProcessState moved = std::move(seeded->second);
  processes_.erase(seeded);
  for (uint32_t qid : moved.queue_ids) {
    auto node = queues_.extract(Key{SeededProcessKey(tgid), qid});
    if (node.empty()) continue;
    node.key() = Key{process_key, qid};
    node.mapped().process_key = process_key;
    queues_.insert(std::move(node));
  }
  ProcessState& target = ProcessFor(process_key, tgid, moved.cgroup_id);
  for (const auto& [gpu, n] : moved.queues_per_gpu) {
    target.queues_per_gpu[gpu] += n;
  }
  target.queue_ids.insert(moved.queue_ids.begin(), moved.queue_ids.end());
  if (target.comm.empty()) target.comm = moved.comm;
}

void Model::OnCreate(const gpuq_queue_create_event& e) {
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
  if (queues_.count(key) != 0) {
    // The kernel never reuses a live queue id within a process: a second
    // create means a lost destroy. Replace the stale entry, count it.
    ++drops_.duplicate_create;
    Remove(key, nullptr);
  }
  QueueState q;
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
  queues_.emplace(key, q);

  ProcessState& p = ProcessFor(process_key, e.hdr.tgid, e.hdr.cgroup_id);
  ++p.queues_per_gpu[e.gpu_id];
  p.queue_ids.insert(e.queue_id);
  if (p.comm.empty()) p.comm = CommOf(e.comm);

  QueueSeries& s =
      queue_series_[{e.hdr.cgroup_id, e.hdr.tgid, e.gpu_id, e.queue_type}];
  ++s.live;
  if (!seeded) ++s.creates;
  Touch(e.hdr.cgroup_id, e.hdr.tgid, +1, p.comm);
}

void Model::Touch(uint64_t cgroup_id, uint32_t tgid, int live_delta,
                  const std::string& comm) {
  OwnerActivity& a = owners_[{cgroup_id, tgid}];
  a.last_change_ns = now_ns_;
  if (live_delta > 0) ++a.live;
  if (live_delta < 0 && a.live > 0) --a.live;
  if (a.comm.empty()) a.comm = comm;
}

bool Model::Remove(const Key& key, QueueState* removed) {
  auto it = queues_.find(key);
  if (it == queues_.end()) return false;
  const QueueState q = it->second;
  queues_.erase(it);

  auto p = processes_.find(q.process_key);
  if (p != processes_.end()) {
    auto gpu = p->second.queues_per_gpu.find(q.gpu_id);
    if (gpu != p->second.queues_per_gpu.end() && --gpu->second == 0) {
      p->second.queues_per_gpu.erase(gpu);
    }
    p->second.queue_ids.erase(q.queue_id);
    // A process is tracked while it holds queues; its exit marker may come
    // before the kworker frees them, so it stays until the last one goes.
    if (p->second.queue_ids.empty()) processes_.erase(p);
  }
  QueueSeries& s = queue_series_[{q.cgroup_id, q.tgid, q.gpu_id, q.queue_type}];
  if (s.live > 0) --s.live;
  Touch(q.cgroup_id, q.tgid, -1, "");
  if (removed != nullptr) *removed = q;
  return true;
}

void Model::OnDestroy(const gpuq_queue_destroy_event& e) {
  AdoptSeeded(e.hdr.process_key, e.hdr.tgid);
  QueueState q;
  bool found = Remove(Key{e.hdr.process_key, e.queue_id}, &q);
  if (!found) {
    // A queue seeded from sysfs whose owner we never saw by kernel key.
    found = Remove(Key{SeededProcessKey(e.hdr.tgid), e.queue_id}, &q);
  }
  if (!found) {
    ++drops_.unknown_queue;
    return;
  }
  const uint32_t reason = e.reason < GPUQ_DESTROY__MAX ? e.reason : 0;
  // Count under the labels the queue was created with, like its gauge.
  ++queue_series_[{q.cgroup_id, q.tgid, q.gpu_id, q.queue_type}]
        .destroys[reason];
}

void Model::OnProcessExit(const gpuq_process_exit_event& e) {
  ++process_exits_[e.hdr.cgroup_id];
  Touch(e.hdr.cgroup_id, e.hdr.tgid, 0, CommOf(e.comm));
  AdoptSeeded(e.hdr.process_key, e.hdr.tgid);
  auto p = processes_.find(e.hdr.process_key);
  if (p != processes_.end()) p->second.exited = true;
}

void Model::OnCreateFailed(const gpuq_queue_create_failed_event& e) {
  ++create_failures_[{e.hdr.cgroup_id, e.gpu_id, e.error}];
  Touch(e.hdr.cgroup_id, e.hdr.tgid, 0, CommOf(e.comm));
}

size_t Model::RetireIdleOwners(uint64_t grace_ns) {
  size_t folded = 0;
  for (auto it = owners_.begin(); it != owners_.end();) {
    const auto [cgroup, tgid] = it->first;
    const OwnerActivity& a = it->second;
    if (tgid == 0 || a.live > 0 || now_ns_ - a.last_change_ns < grace_ns) {
      ++it;
      continue;
    }
    // Move the owner's counters into the cgroup's remainder (tgid 0).
    auto s = queue_series_.lower_bound({cgroup, tgid, 0, 0});
    while (s != queue_series_.end() && s->first.cgroup_id == cgroup &&
           s->first.tgid == tgid) {
      QueueSeries& rest =
          queue_series_[{cgroup, 0, s->first.gpu_id, s->first.queue_type}];
      rest.creates += s->second.creates;
      for (size_t r = 0; r < rest.destroys.size(); ++r) {
        rest.destroys[r] += s->second.destroys[r];
      }
      s = queue_series_.erase(s);
    }
    OwnerActivity& remainder = owners_[{cgroup, 0}];
    remainder.last_change_ns =
        std::max(remainder.last_change_ns, a.last_change_ns);
    it = owners_.erase(it);
    ++folded;
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

void Model::EraseCgroup(uint64_t cgroup_id) {
  for (auto it = queue_series_.begin(); it != queue_series_.end();) {
    it = it->first.cgroup_id == cgroup_id ? queue_series_.erase(it)
                                          : std::next(it);
  }
  for (auto it = create_failures_.begin(); it != create_failures_.end();) {
    it = it->first.cgroup_id == cgroup_id ? create_failures_.erase(it)
                                          : std::next(it);
  }
  process_exits_.erase(cgroup_id);
  for (auto it = owners_.begin(); it != owners_.end();) {
    it = it->first.first == cgroup_id ? owners_.erase(it) : std::next(it);
  }
}

ReconcileDiff Model::Diff(const std::vector<SysfsQueue>& sysfs) const {
  ReconcileDiff diff;
  std::set<std::pair<uint32_t, uint32_t>> in_sysfs;
  for (const SysfsQueue& s : sysfs) {
    in_sysfs.emplace(s.pid, s.queue_id);
    --diff.drift_per_gpu[s.gpu_id];
  }
  std::set<std::pair<uint32_t, uint32_t>> in_model;
  for (const auto& [key, q] : queues_) {
    in_model.emplace(q.tgid, q.queue_id);
    ++diff.drift_per_gpu[q.gpu_id];
    if (in_sysfs.count({q.tgid, q.queue_id}) == 0) {
      diff.missing_in_sysfs.push_back(q);
    }
  }
  for (const SysfsQueue& s : sysfs) {
    if (in_model.count({s.pid, s.queue_id}) == 0) {
      diff.missing_in_model.push_back(s);
    }
  }
  return diff;
}

void Model::Forget(uint64_t process_key, uint32_t queue_id) {
  Remove(Key{process_key, queue_id}, nullptr);
}

}  // namespace gpuq
