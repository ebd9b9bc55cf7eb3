#include "report/run_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "export/collector.h"
#include "model/container_rows.h"
#include "model/pipeline.h"
#include "model/queue_column.h"
#include "model/runlist_cause.h"
#include "resolver/cgroup_path.h"
#include "resolver/gpu_topology.h"
#include "sources/capture_stream.h"
#include "sources/runtime_knobs.h"

namespace gpuq::report {
namespace {

constexpr double kNsPerS = 1e9;

double Seconds(uint64_t ns) { return static_cast<double>(ns) / kNsPerS; }

std::string GpuTrack(uint32_t gpu_id) { return fmt::format("gpu {}", gpu_id); }

std::string ProcessTrack(uint32_t pid, const std::string& comm) {
  return comm.empty() ? fmt::format("pid {}", pid)
                      : fmt::format("pid {} ({})", pid, comm);
}

void Raise(uint64_t value, uint64_t* peak) { *peak = std::max(*peak, value); }

// The timeline's word for how a queue's lifetime ended.
std::string QueueEndLabel(QueueEnd end) {
  switch (end.how) {
    case QueueEnd::How::kReplaced:
      return "replaced";
    case QueueEnd::How::kReconciled:
      return "reconciled";
    default:
      return DestroyReasonLabel(end.destroy_reason);
  }
}

// Live queues of one holder (process, container, whole run) and their peaks.
struct Counts {
  uint64_t live = 0;
  uint64_t peak = 0;
  uint64_t compute_live = 0;
  uint64_t compute_peak = 0;
  uint64_t created = 0;
  /// Every GPU a queue was on, one node each: a queue added or removed
  /// steps one (three owners count each queue).
  struct OnGpu {
    uint64_t live = 0;
    uint64_t peak = 0;
    uint64_t compute_live = 0;
    uint64_t compute_peak = 0;
  };
  std::map<uint32_t, OnGpu> per_gpu;

  void Inc(uint32_t gpu, bool compute) {
    Raise(++live, &peak);
    OnGpu& g = per_gpu[gpu];
    Raise(++g.live, &g.peak);
    if (compute) {
      Raise(++compute_live, &compute_peak);
      Raise(++g.compute_live, &g.compute_peak);
    }
  }
  void Dec(uint32_t gpu, bool compute) {
    --live;
    OnGpu& g = per_gpu[gpu];
    --g.live;
    if (compute) {
      --compute_live;
      --g.compute_live;
    }
  }
  /// The most queues at once on each GPU used (`of`: of compute queues).
  std::map<uint32_t, uint64_t> PeakPerGpu(
      uint64_t OnGpu::*of = &OnGpu::peak) const {
    std::map<uint32_t, uint64_t> out;
    for (const auto& [gpu, g] : per_gpu) out.emplace(gpu, g.*of);
    return out;
  }
  QueueClass Class() const { return Classify(peak, PeakPerGpu()); }
  QueueClass ComputeClass() const {
    return Classify(compute_peak, PeakPerGpu(&OnGpu::compute_peak));
  }
};

// A queue the model holds live, as the report follows it.
struct LiveQueue {
  uint32_t tgid = 0;
  uint32_t queue_id = 0;
  uint32_t gpu_id = 0;
  uint32_t type = 0;
  uint64_t cgroup_id = 0;
  uint64_t start_ns = 0;
  bool seeded = false;
  uint64_t pending = 0;  // as the model's gauge counts it now
  // Its submissions are spread over the timeline up to here: its create,
  // then each sample that counted packets.
  uint64_t counted_until_ns = 0;
};

struct ProcInfo {
  uint32_t pid = 0;
  std::string comm;
  uint64_t cgroup_id = 0;
  Counts counts;
  bool exited = false;
  uint64_t create_failures = 0;
  std::optional<std::string> knobs;  // RuntimeKnobsLabel, once read
  // Its queue lifetimes' track (Timeline::LifetimeTrack), named with
  // track_comm.
  std::optional<uint32_t> track;
  std::string track_comm;
  bool rate_series = false;  // its process_series_ entry is made
};

struct ContainerInfo {
  uint64_t cgroup_id = 0;  // the first cgroup seen: its labels name the row
  Counts counts;
  std::set<uint32_t> pids;
  uint64_t create_failures = 0;
};

// Most queues at once at high priority, fenced by a CU mask, and whose
// submissions are not counted.
struct QueueClassPeaks {
  uint64_t high_priority = 0;
  uint64_t cu_restricted = 0;
  uint64_t unsampled = 0;
  void RaiseWith(const QueueClassPeaks& now) {
    Raise(now.high_priority, &high_priority);
    Raise(now.cu_restricted, &cu_restricted);
    Raise(now.unsampled, &unsampled);
  }
  // As counts: `by`'s columns up (delta +1) or down (-1).
  void Step(const QueueClassPeaks& by, int delta) {
    for (auto [n, step] : {std::pair{&high_priority, by.high_priority},
                           std::pair{&cu_restricted, by.cu_restricted},
                           std::pair{&unsampled, by.unsampled}}) {
      *n = delta > 0 ? *n + step : *n - step;
    }
  }
  void Add(const QueueClassPeaks& o) { Step(o, +1); }
};

struct GpuTypeInfo {
  uint64_t live = 0;
  uint64_t peak = 0;
  uint64_t at_start = 0;
  // A deque: hundreds of thousands grow in blocks, with no vector twice
  // their size to copy into (the report's peak memory).
  std::deque<uint64_t> lifetimes_ns;
};

// A bucketed series whose values are appended bucket by bucket; a series
// first seen in bucket k starts with k zeros. A rate's buckets may also be
// added to after they closed (a sample's packets spread back over the time
// since the queue's previous reading).
struct SeriesAcc {
  std::vector<double> values;
  size_t buckets = 0;  // its length (Series::buckets): zeros after values
};

// Adds `value` to bucket `bucket` of `s`, growing it with zeros.
void AddAt(SeriesAcc* s, size_t bucket, double value) {
  if (s->values.size() <= bucket) s->values.resize(bucket + 1, 0.0);
  s->values[bucket] += value;
}

// The largest value of `key`'s series in `series` (a rate's busiest
// bucket); 0 without one.
template <typename Map, typename Key>
double BusiestBucket(const Map& series, const Key& key) {
  auto it = series.find(key);
  if (it == series.end()) return 0.0;
  double peak = 0.0;
  for (double v : it->second.values) peak = std::max(peak, v);
  return peak;
}

void AppendAt(SeriesAcc* s, size_t bucket, double value) {
  if (s->values.size() < bucket) s->values.resize(bucket, 0.0);
  s->values.push_back(value);
}

}  // namespace

DurationStats ComputeDurationStats(std::vector<uint64_t> durations_ns) {
  DurationStats d;
  if (durations_ns.empty()) return d;
  std::sort(durations_ns.begin(), durations_ns.end());
  const size_t n = durations_ns.size();
  d.count = n;
  uint64_t sum = 0;  // exact in ns, converted once
  for (uint64_t v : durations_ns) sum += v;
  d.sum = Seconds(sum);
  d.min = Seconds(durations_ns.front());
  d.max = Seconds(durations_ns.back());
  auto rank = [&](unsigned percent) {
    // Nearest rank: ceil(p/100 * n), 1-based, in integers (no rounding).
    size_t r = (percent * n + 99) / 100;
    if (r < 1) r = 1;
    return Seconds(durations_ns[r - 1]);
  };
  d.p50 = rank(50);
  d.p90 = rank(90);
  d.p99 = rank(99);
  return d;
}

QueueClass Classify(uint64_t peak_total,
                    const std::map<uint32_t, uint64_t>& peak_per_gpu) {
  if (peak_total == 0) return QueueClass::kNone;
  for (const auto& [gpu, peak] : peak_per_gpu) {
    if (peak > 1) return QueueClass::kMoreThanGpus;
  }
  return peak_total == 1 ? QueueClass::kSingleQueue : QueueClass::kOnePerGpu;
}

// Follows the real model (a replay Pipeline) record by record: its
// decisions arrive through ModelObserver, its series are read at bucket
// ends; what it does not keep (peaks, lifetimes, names, the timeline) is
// kept here.
class Analyzer::Impl : private ModelObserver {
 public:
  Impl(std::string name, double step_s, uint64_t start_realtime_ns)
      : pipeline_(ReplayOptions(), nullptr) {
    report_.name = std::move(name);
    report_.start_realtime_ns = start_realtime_ns;
    step_s_ = step_s > 0 ? step_s : 1.0;
    step_ns_ = std::max<uint64_t>(
        1, static_cast<uint64_t>(std::llround(step_s_ * kNsPerS)));
    report_.timeline.step_s = step_s_;
    pipeline_.SetModelObserver(this);
  }
  // The pipeline outlives the members its observer writes (declared first).
  ~Impl() override { pipeline_.SetModelObserver(nullptr); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  void Add(const Event& event) {
    const gpuq_event_header& hdr = Header(event);
    if (records_ == 0) {
      t0_ns_ = hdr.ts_ns;
      last_ns_ = hdr.ts_ns;
    }
    ++records_;
    // Records out of order (a sampler thread's record racing the ring
    // buffer) stay in the current bucket: buckets never reopen.
    CloseBucketsBefore(hdr.ts_ns);
    last_ns_ = std::max<uint64_t>(last_ns_, hdr.ts_ns);
    now_ns_ = hdr.ts_ns;
    pipeline_.Handle(event);
    std::visit([this](const auto& e) { On(e); }, event);
  }

  RunReport Finish();

 private:
  static PipelineOptions ReplayOptions() {
    PipelineOptions p;
    p.use_sysfs = false;   // the capture carries topology and seeded queues
    p.metadata = nullptr;  // and the names the runtime gave
    return p;
  }

  double Rel(uint64_t ts_ns) const {
    return ts_ns > t0_ns_ ? Seconds(ts_ns - t0_ns_) : 0.0;
  }

  uint64_t BucketOf(uint64_t ts_ns) const {
    return ts_ns > t0_ns_ ? (ts_ns - t0_ns_) / step_ns_ : 0;
  }

  void CloseBucketsBefore(uint64_t ts_ns) {
    const uint64_t target = BucketOf(ts_ns);
    while (bucket_ < target) CloseBucket();
  }

  // Ends bucket_: the live queues per GPU at its end. The rates were added
  // as samples came (SpreadSubmissions); their zeros wait for Finish
  // (FillRateSeries), so a bucket's work is what changed in it, not one
  // step per owner.
  void CloseBucket() {
    RaiseQueueClassPeaks();
    const size_t b = bucket_;
    for (const auto& [gpu, on] : run_.per_gpu) {
      AppendAt(&gpu_series_[gpu], b, static_cast<double>(on.live));
    }
    ++bucket_;
  }

  // Every rate series the timeline draws (one per container and process,
  // made at its first queue) reaches the last closed bucket, its buckets
  // without samples zero: its length says so, the zeros after its last
  // sample are not stored. (The per-GPU and whole-run rates only give
  // peaks: their length does not matter.)
  void FillRateSeries() {
    auto reach = [this](auto& series) {
      for (auto& [key, acc] : series) acc.buckets = bucket_;
    };
    reach(container_series_);
    reach(process_series_);
  }

  // `packets` a queue wrote between `from_ns` and `to_ns`, spread over the
  // buckets that interval covers in proportion to its time in each (a
  // sample's delta after a 10 s gap is 10 s of submissions, not one
  // second's), as rates in every series the queue counts in.
  void SpreadSubmissions(const QueueState& q, uint64_t packets,
                         uint64_t from_ns, uint64_t to_ns) {
    if (packets == 0) return;
    SeriesAcc* series[] = {RateOf(q.cgroup_id), &process_series_[q.tgid],
                           &gpu_rate_series_[q.gpu_id], &run_rate_};
    const auto add = [&](size_t bucket, double share) {
      for (SeriesAcc* s : series) AddAt(s, bucket, share / step_s_);
    };
    const double total = static_cast<double>(packets);
    if (to_ns <= from_ns) {
      add(BucketOf(to_ns), total);
      return;
    }
    const double span = static_cast<double>(to_ns - from_ns);
    for (uint64_t b = BucketOf(from_ns), last = BucketOf(to_ns); b <= last;
         ++b) {
      const uint64_t begin = std::max(from_ns, t0_ns_ + b * step_ns_);
      const uint64_t end = std::min(to_ns, t0_ns_ + (b + 1) * step_ns_);
      if (end > begin) {
        add(b, total * static_cast<double>(end - begin) / span);
      }
    }
  }

  // The model's class gauges as they step: counts per cgroup and for the
  // run, the cgroups that changed since the last bucket end noted.
  void QueueClassified(const QueueClasses& c, int delta) override {
    const QueueClassPeaks step{
        CountsAsHighPriority(c.priority) ? 1u : 0u,
        c.cu_mask && CountsAsCuRestricted(*c.cu_mask) ? 1u : 0u,
        c.unsampled ? 1u : 0u};
    if (step.high_priority + step.cu_restricted + step.unsampled == 0) return;
    auto [now, fresh] = class_now_.try_emplace(c.cgroup_id);
    if (fresh) cgroups_of_key_[ContainerKey(c.cgroup_id)].insert(c.cgroup_id);
    now->second.Step(step, delta);
    run_class_now_.Step(step, delta);
    classes_changed_.insert(c.cgroup_id);
  }

  // At a bucket's end, the queues at high priority, CU-restricted and
  // unsampled raise the peaks of the containers whose counts changed in it
  // (a container's cgroups summed, as the one row model sums the gauges)
  // and the run's.
  void RaiseQueueClassPeaks() {
    if (classes_changed_.empty()) return;
    std::set<std::string> keys;
    for (uint64_t cgroup : classes_changed_) keys.insert(ContainerKey(cgroup));
    classes_changed_.clear();
    for (const std::string& key : keys) {
      QueueClassPeaks sum;
      for (uint64_t cgroup : cgroups_of_key_[key]) {
        // A cgroup whose path record came later left its first key.
        if (ContainerKey(cgroup) == key) sum.Add(class_now_[cgroup]);
      }
      class_peaks_[key].RaiseWith(sum);
    }
    run_class_peaks_.RaiseWith(run_class_now_);
  }

  // Containers are keyed by the full id their cgroup path names ("" for
  // the host), so nested cgroups of one container count together.
  std::string ContainerKey(uint64_t cgroup_id) {
    auto it = container_of_cgroup_.find(cgroup_id);
    if (it != container_of_cgroup_.end()) return it->second;
    // No path record: a cgroup the recording agent could not resolve.
    std::string key = fmt::format("cgroup:{}", cgroup_id);
    container_of_cgroup_.emplace(cgroup_id, key);
    return key;
  }

  ContainerInfo& Container(uint64_t cgroup_id) { return *Slot(cgroup_id).info; }

  // A cgroup's container row and rate series, found by its key once: the
  // hot paths (each queue added, removed or sampled) then compare no
  // strings. Forgotten when a path record may change the cgroup's key.
  struct ContainerSlot {
    ContainerInfo* info = nullptr;
    SeriesAcc* rate = nullptr;
  };
  ContainerSlot& Slot(uint64_t cgroup_id) {
    auto [slot, fresh] = container_slots_.try_emplace(cgroup_id);
    if (fresh) {
      auto [it, inserted] = containers_.try_emplace(ContainerKey(cgroup_id));
      if (inserted) it->second.cgroup_id = cgroup_id;
      slot->second.info = &it->second;
    }
    return slot->second;
  }

  // The container's rate series, from its first queue on (FillRateSeries
  // zero-fills it from the start).
  SeriesAcc* RateOf(uint64_t cgroup_id) {
    ContainerSlot& slot = Slot(cgroup_id);
    if (slot.rate == nullptr) {
      const std::string key = ContainerKey(cgroup_id);
      slot.rate = &container_series_[key];
    }
    return slot.rate;
  }

  ProcInfo& Process(uint32_t tgid, uint64_t cgroup_id) {
    // A queue's create names its process, then adds the queue: the same
    // process twice in a row (processes_ keeps every one it made).
    if (last_process_ != nullptr && last_process_->pid == tgid) {
      return *last_process_;
    }
    auto [it, inserted] = processes_.try_emplace(tgid);
    if (inserted) {
      it->second.pid = tgid;
      it->second.cgroup_id = cgroup_id;
    }
    last_process_ = &it->second;
    return it->second;
  }
  // The process of a record that carries its name, named by the first.
  template <typename Record>
  ProcInfo& NamedProcess(const Record& e) {
    ProcInfo& p = Process(e.hdr.tgid, e.hdr.cgroup_id);
    if (p.comm.empty()) p.comm = CommOf(e.comm);
    return p;
  }

  template <typename Slices>
  void AddSlice(Slices* list, Slice slice) {
    if (list->size() >= kMaxSlicesPerList) {
      ++report_.timeline.slices_omitted;
      return;
    }
    list->push_back(std::move(slice));
  }

  void On(const CgroupPathRecord& r) {
    container_of_cgroup_[r.hdr.cgroup_id] =
        ParseCgroupPath(r.path).container_id;
    container_slots_.erase(r.hdr.cgroup_id);
    if (class_now_.count(r.hdr.cgroup_id) != 0) {
      cgroups_of_key_[ContainerKey(r.hdr.cgroup_id)].insert(r.hdr.cgroup_id);
      classes_changed_.insert(r.hdr.cgroup_id);
    }
  }
  void On(const ContainerMetaRecord&) {}
  // A GPU's physical GPU, by its PCI device (a partition's node is the
  // physical GPU's device with the partition in its function bits).
  void On(const gpuq_gpu_info_record& e) {
    MovePhysical(e.gpu_id, FromRecord(e).PhysicalPci());
  }
  void On(const gpuq_doorbell_count_record&) {}
  // What the recording lost: the model's (DroppedEvents at Finish).
  void On(const gpuq_source_drops_record&) {}
  void On(const gpuq_process_knobs_record& e) {
    Process(e.hdr.tgid, e.hdr.cgroup_id).knobs = RuntimeKnobsLabel(e);
  }
  // Priorities, CU masks and sampling: the model's (QueueClassified).
  void On(const gpuq_queue_update_event&) {}
  void On(const gpuq_queue_cu_mask_event&) {}
  void On(const gpuq_queue_sample_record&) {}
  void On(const gpuq_queue_destroy_event&) {}
  void On(const gpuq_runlist_event&) {}
  void On(const gpuq_eviction_event&) {}

  // The name the process gave; its queues are the model's (QueueAdded).
  void On(const gpuq_queue_create_event& e) { NamedProcess(e); }

  void On(const gpuq_process_exit_event& e) { NamedProcess(e).exited = true; }

  void On(const gpuq_queue_create_failed_event& e) {
    ++failures_[{e.hdr.cgroup_id, e.hdr.tgid, e.gpu_id, e.error}];
    ++Container(e.hdr.cgroup_id).create_failures;
    ++NamedProcess(e).create_failures;
  }

  // ---- The model's decisions (ModelObserver) ----

  void QueueAdded(const QueueState& state) override {
    LiveQueue q;
    q.tgid = state.tgid;
    q.queue_id = state.queue_id;
    q.gpu_id = state.gpu_id;
    q.type = state.queue_type;
    q.cgroup_id = state.cgroup_id;
    q.start_ns = state.created_ns;
    q.counted_until_ns = state.created_ns;
    q.seeded = state.seeded;
    const bool created = state.CountedCreate();
    const bool compute = QueueColumnOf(q.type) == QueueColumn::kCompute;
    ProcInfo& p = Process(q.tgid, q.cgroup_id);
    ContainerInfo& c = Container(q.cgroup_id);
    RateOf(q.cgroup_id);
    c.pids.insert(q.tgid);
    for (Counts* counts : {&p.counts, &c.counts, &run_}) {
      counts->Inc(q.gpu_id, compute);
      if (created) ++counts->created;
    }
    PhysicalLive& phys = PhysicalOf(q.gpu_id);
    Raise(++phys.live, &phys.peak);
    GpuTypeInfo& gt = gpu_types_[{q.gpu_id, q.type}];
    Raise(++gt.live, &gt.peak);
    if (!created) ++gt.at_start;
    queues_[state.serial] = q;
    // Their rate series, from their first queue on (FillRateSeries).
    if (!p.rate_series) {
      process_series_.try_emplace(q.tgid);
      p.rate_series = true;
    }
    gpu_rate_series_.try_emplace(q.gpu_id);
  }

  void QueueRemoved(const QueueState& state, uint64_t ts_ns,
                    QueueEnd end) override {
    auto it = queues_.find(state.serial);
    if (it == queues_.end()) return;
    const LiveQueue& q = it->second;
    const bool compute = QueueColumnOf(q.type) == QueueColumn::kCompute;
    ProcInfo& p = Process(q.tgid, q.cgroup_id);
    for (Counts* counts : {&p.counts, &Container(q.cgroup_id).counts, &run_}) {
      counts->Dec(q.gpu_id, compute);
    }
    --PhysicalOf(q.gpu_id).live;
    GpuTypeInfo& gt = gpu_types_[{q.gpu_id, q.type}];
    --gt.live;
    const uint64_t ns = ts_ns > q.start_ns ? ts_ns - q.start_ns : 0;
    // Seeded queues were created before the capture: no real lifetime.
    if (!q.seeded) gt.lifetimes_ns.push_back(ns);
    SetPending(&it->second, 0);
    AddLifetimeSlice(q, &p, ts_ns, QueueEndLabel(end));
    queues_.erase(it);
  }

  void QueueSampled(const QueueState& state, uint64_t packets) override {
    auto it = queues_.find(state.serial);
    if (it == queues_.end()) return;
    if (!state.readable()) {
      SetPending(&it->second, 0);  // the gauge leaves out unreadable queues
      return;
    }
    SpreadSubmissions(state, packets, it->second.counted_until_ns, now_ns_);
    it->second.counted_until_ns =
        std::max(it->second.counted_until_ns, now_ns_);
    QueueSubmissionRow& row = SubmissionRow(state);
    row.submissions += packets;
    ++row.samples;
    Raise(state.pending(), &row.pending_peak);
    SetPending(&it->second, state.pending());
  }

  void QueueLastWords(const QueueState& state, uint64_t packets) override {
    // A queue reconciliation removed earlier has no reading to spread from.
    auto it = queues_.find(state.serial);
    SpreadSubmissions(
        state, packets,
        it != queues_.end() ? it->second.counted_until_ns : now_ns_, now_ns_);
    SubmissionRow(state).submissions += packets;
  }

  void RunlistApplied(const gpuq_runlist_event& e) override {
    const bool mes =
        e.op == GPUQ_RUNLIST_MES_ADD || e.op == GPUQ_RUNLIST_MES_REMOVE;
    const bool unmap =
        e.op == GPUQ_RUNLIST_UNMAP || e.op == GPUQ_RUNLIST_MES_REMOVE;
    auto& durations = runlist_durations_[{e.gpu_id, mes}];
    (unmap ? durations.first : durations.second).push_back(e.duration_ns);

    Slice s;
    s.track = GpuTrack(e.gpu_id);
    if (mes) {
      s.name = fmt::format("{} (queue {})", unmap ? "mes remove" : "mes add",
                           e.queue_id);
    } else {
      s.name =
          unmap ? fmt::format("unmap ({})", UnmapFilterLabel(e.filter)) : "map";
    }
    // ts_ns is the return time: the operation began duration_ns earlier.
    const uint64_t start_ns =
        e.hdr.ts_ns > e.duration_ns ? e.hdr.ts_ns - e.duration_ns : 0;
    s.start_s = Rel(start_ns);
    s.duration_s = Seconds(e.duration_ns);
    s.args = {{"scheduler", mes ? "mes" : "hws"},
              {"cause", RunlistCauseLabel(KnownRunlistCause(e.cause))}};
    if (e.hdr.tgid != 0) s.args["pid"] = std::to_string(e.hdr.tgid);
    if (e.ret != 0) s.args["error"] = ErrnoLabel(e.ret);
    if (!mes) s.args["active_queues"] = std::to_string(e.active_queues);
    AddSlice(&report_.timeline.runlist_ops, std::move(s));
  }

  void Evicted(const EvictionNotice& n, bool opened) override {
    EvictionRow row;
    row.pid = n.tgid;
    row.gpu_id = n.gpu_id;
    row.trigger = EvictionTriggerLabel(n.trigger);
    row.start_s = Rel(n.evict_ns);
    eviction_cgroups_.push_back(n.cgroup_id);
    report_.eviction_list.push_back(row);
    Container(n.cgroup_id);  // an evicted container gets a row
    if (opened) eviction_row_[n.serial] = report_.eviction_list.size() - 1;
  }

  void EvictionEnded(const EvictionNotice& n, uint64_t end_ns,
                     bool restored) override {
    auto it = eviction_row_.find(n.serial);
    if (it == eviction_row_.end()) return;
    EvictionRow& row = report_.eviction_list[it->second];
    eviction_row_.erase(it);
    if (!restored) {
      row.process_exited = true;
      return;
    }
    const uint64_t ns = end_ns > n.evict_ns ? end_ns - n.evict_ns : 0;
    row.duration_s = Seconds(ns);
    eviction_durations_ns_.push_back(ns);
  }

  void Preempted(const PreemptionKey& key, uint64_t by_cgroup) override {
    ++preempted_by_[{key.cgroup_id, by_cgroup}].preemptions;
  }

  // Who preempted whom, and the timeline's off-GPU slices (named at Finish,
  // when the owners' labels are known).
  void PreemptionWindow(const PreemptionKey& key, uint64_t by_cgroup,
                        uint64_t start_ns, uint64_t end_ns) override {
    preempted_by_[{key.cgroup_id, by_cgroup}].off_ns += end_ns - start_ns;
    if (off_windows_.size() >= kMaxSlicesPerList) {
      ++report_.timeline.slices_omitted;
      return;
    }
    off_windows_.push_back({key, by_cgroup, start_ns, end_ns});
  }

  void OversubscribedWindow(uint32_t gpu_id, uint64_t start_ns, uint64_t end_ns,
                            const RunlistShape& shape) override {
    AddOversubscribedSlice(gpu_id, start_ns, end_ns, shape, false);
  }

  // ---- Report-only bookkeeping ----

  // Live queues on a physical GPU (its partitions summed) and their most
  // at once, keyed by its PCI device.
  struct PhysicalLive {
    uint64_t live = 0;
    uint64_t peak = 0;
  };
  // The GPU's physical GPU; a GPU with no info record yet is its own.
  PhysicalLive& PhysicalOf(uint32_t gpu_id) {
    auto it = physical_of_gpu_.find(gpu_id);
    if (it == physical_of_gpu_.end()) {
      it = physical_of_gpu_
               .emplace(gpu_id, &physical_live_[fmt::format("gpu {}", gpu_id)])
               .first;
    }
    return *it->second;
  }
  // Puts `gpu_id` on the physical GPU `pci`, its live queues with it.
  void MovePhysical(uint32_t gpu_id, const std::string& pci) {
    PhysicalLive& to = physical_live_[pci];
    PhysicalLive& from = PhysicalOf(gpu_id);
    if (&from == &to) return;
    const auto on = run_.per_gpu.find(gpu_id);
    const uint64_t n = on != run_.per_gpu.end() ? on->second.live : 0;
    from.live -= n;
    to.live += n;
    Raise(to.live, &to.peak);
    physical_of_gpu_[gpu_id] = &to;
  }

  void AddLifetimeSlice(const LiveQueue& q, ProcInfo* p, uint64_t end_ns,
                        const std::string& how) {
    if (report_.timeline.queue_lifetimes.size() >= kMaxSlicesPerList) {
      ++report_.timeline.slices_omitted;
      return;
    }
    QueueLifetime l;
    l.queue_id = q.queue_id;
    l.start_s = Rel(q.start_ns);
    l.duration_s = std::max(0.0, Rel(end_ns) - l.start_s);
    // The process's track, named again only if its name changed.
    if (!p->track || p->track_comm != p->comm) {
      p->track = report_.timeline.LifetimeTrack(ProcessTrack(q.tgid, p->comm));
      p->track_comm = p->comm;
    }
    l.track = *p->track;
    report_.timeline.AddLifetime(l, q.gpu_id, q.type, how, q.seeded);
  }

  // One window of an oversubscribed runlist on the timeline; `open`: still
  // oversubscribed when the capture ended.
  void AddOversubscribedSlice(uint32_t gpu_id, uint64_t start_ns,
                              uint64_t end_ns, const RunlistShape& shape,
                              bool open) {
    Slice s;
    s.track = GpuTrack(gpu_id);
    s.name = "oversubscribed: " + OversubscribedBecause(shape);
    s.start_s = Rel(start_ns);
    s.duration_s = Seconds(end_ns > start_ns ? end_ns - start_ns : 0);
    for (size_t k = 0; k < kRunlistEntryKinds; ++k) {
      if (shape.limits[k] == 0) continue;  // not read
      s.args[RunlistEntryKindLabel(static_cast<RunlistEntryKind>(k))] =
          fmt::format("{}/{}", shape.entries[k], shape.limits[k]);
    }
    if (open) s.args["end"] = "open";
    AddSlice(&report_.timeline.oversubscribed, std::move(s));
  }

  void SetPending(LiveQueue* q, uint64_t pending) {
    pending_total_ = pending_total_ - q->pending + pending;
    uint64_t& gpu = pending_per_gpu_[q->gpu_id];
    gpu = gpu - q->pending + pending;
    q->pending = pending;
    Raise(pending_total_, &pending_peak_);
    Raise(gpu, &pending_peak_per_gpu_[q->gpu_id]);
  }

  // The queue's row, made when the model first counts its submissions.
  QueueSubmissionRow& SubmissionRow(const QueueState& q) {
    auto [it, inserted] = submission_row_.try_emplace(q.serial);
    if (inserted) {
      it->second = queue_rows_.size();
      QueueSubmissionRow row;
      row.pid = q.tgid;
      row.gpu_id = q.gpu_id;
      row.queue_id = q.queue_id;
      row.created_s = q.seeded ? 0.0 : Rel(q.created_ns);
      row.queue_type = QueueTypeLabel(q.queue_type);
      queue_rows_.push_back(row);
      queue_row_cgroups_.push_back(q.cgroup_id);
    }
    return queue_rows_[it->second];
  }

  Owner OwnerOf(const Snapshot& s, uint64_t cgroup_id) const {
    auto it = s.labels.find(cgroup_id);
    if (it != s.labels.end()) {
      return {it->second.container, it->second.pod, it->second.ns};
    }
    return {};
  }

  std::string SeriesName(const Owner& o) const {
    return ContainerOrHost(o.container);
  }

  Pipeline pipeline_;
  RunReport report_;
  double step_s_ = 1.0;
  uint64_t step_ns_ = 1000000000;
  uint64_t records_ = 0;
  uint64_t t0_ns_ = 0;
  uint64_t last_ns_ = 0;

  // Timeline state.
  uint64_t bucket_ = 0;
  std::map<uint32_t, SeriesAcc> gpu_series_;
  std::map<std::string, SeriesAcc> container_series_;
  std::map<uint32_t, SeriesAcc> process_series_;
  std::map<uint32_t, SeriesAcc> gpu_rate_series_;
  SeriesAcc run_rate_;   // the whole run's submissions per second
  uint64_t now_ns_ = 0;  // the record the model is handling
  std::map<std::string, QueueClassPeaks> class_peaks_;  // by container key
  QueueClassPeaks run_class_peaks_;
  std::unordered_map<uint64_t, QueueClassPeaks> class_now_;  // by cgroup
  QueueClassPeaks run_class_now_;
  std::set<uint64_t> classes_changed_;  // cgroups, since the last bucket end
  std::map<std::string, std::set<uint64_t>> cgroups_of_key_;

  // Raw per-record facts.
  std::map<uint64_t, std::string> container_of_cgroup_;
  // By QueueState::serial; hashed, as each queue's add, sample and end finds
  // it (Finish orders the open ones).
  std::unordered_map<uint64_t, LiveQueue> queues_;
  // Hashed: each queue added or removed finds its process; the rows are
  // sorted by owner and pid.
  std::unordered_map<uint32_t, ProcInfo> processes_;
  ProcInfo* last_process_ = nullptr;  // Process()'s last answer
  std::map<std::string, ContainerInfo> containers_;
  std::map<std::string, PhysicalLive> physical_live_;  // by PCI device
  std::unordered_map<uint32_t, PhysicalLive*> physical_of_gpu_;
  std::unordered_map<uint64_t, ContainerSlot> container_slots_;
  Counts run_;
  std::map<std::pair<uint32_t, uint32_t>, GpuTypeInfo> gpu_types_;
  /// (gpu, mes) -> (unmap durations, map durations), ns.
  std::map<std::pair<uint32_t, bool>,
           std::pair<std::vector<uint64_t>, std::vector<uint64_t>>>
      runlist_durations_;
  std::map<uint64_t, size_t> eviction_row_;  // open: EvictionNotice::serial
  std::vector<uint64_t> eviction_cgroups_;   // per eviction_list row
  struct OffWindow {
    PreemptionKey key;
    uint64_t by_cgroup;
    uint64_t start_ns, end_ns;
  };
  struct PreemptedBy {
    uint64_t preemptions = 0;
    uint64_t off_ns = 0;
  };
  /// (victim cgroup, causing cgroup) -> as the model counted them.
  std::map<std::pair<uint64_t, uint64_t>, PreemptedBy> preempted_by_;
  std::vector<OffWindow> off_windows_;  // the model's, as they closed
  std::vector<uint64_t> eviction_durations_ns_;
  std::map<std::tuple<uint64_t, uint32_t, uint32_t, int32_t>, uint64_t>
      failures_;
  std::vector<QueueSubmissionRow> queue_rows_;
  std::vector<uint64_t> queue_row_cgroups_;
  std::map<uint64_t, size_t> submission_row_;  // QueueState::serial -> row
  uint64_t pending_total_ = 0;
  uint64_t pending_peak_ = 0;
  std::map<uint32_t, uint64_t> pending_per_gpu_;
  std::map<uint32_t, uint64_t> pending_peak_per_gpu_;
};

RunReport Analyzer::Impl::Finish() {
  RunReport& r = report_;
  r.records = records_;
  if (records_ > 0) {
    // The last bucket holds the last record; buckets before it are closed.
    CloseBucketsBefore(last_ns_);
    CloseBucket();
  }
  FillRateSeries();
  r.duration_s = records_ > 0 ? Seconds(last_ns_ - t0_ns_) : 0.0;
  const Snapshot s = pipeline_.TakeSnapshot();
  const double duration = r.duration_s;
  auto per_s = [duration](uint64_t n) {
    return duration > 0 ? static_cast<double>(n) / duration : 0.0;
  };

  // ---- Headline totals, as the exported families sum them ----
  r.gpus_in_topology = s.gpus.size();
  std::map<uint32_t, uint64_t> submissions_by_tgid;
  std::map<uint32_t, uint64_t> submissions_by_gpu;
  std::map<std::pair<uint32_t, uint32_t>, std::pair<uint64_t, uint64_t>>
      created_destroyed;  // (gpu, type)
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> live_at_end;
  for (const auto& [key, series] : s.queue_series) {
    r.queues_at_end += series.live;
    r.queues_created += series.creates;
    uint64_t destroyed = 0;
    for (uint64_t n : series.destroys) destroyed += n;
    r.queues_destroyed += destroyed;
    r.submissions += series.submissions;
    submissions_by_tgid[key.tgid] += series.submissions;
    submissions_by_gpu[key.gpu_id] += series.submissions;
    auto& cd = created_destroyed[{key.gpu_id, key.queue_type}];
    cd.first += series.creates;
    cd.second += destroyed;
    live_at_end[{key.gpu_id, key.queue_type}] += series.live;
  }
  r.submissions_mean_per_s = per_s(r.submissions);
  r.submissions_peak_per_s = 0.0;
  for (double v : run_rate_.values) {
    r.submissions_peak_per_s = std::max(r.submissions_peak_per_s, v);
  }
  r.pending_peak = pending_peak_;
  for (const auto& [key, series] : s.doorbells) r.doorbells += series.doorbells;
  for (const auto& [key, series] : s.runlist) {
    for (const auto& [filter, n] : series.unmaps_by_filter) r.unmaps += n;
    r.maps += series.map.count;
  }
  for (const auto& [key, n] : s.runlist_failures) r.runlist_failures += n;
  for (const auto& [key, series] : s.evictions) r.evictions += series.evictions;
  for (const auto& [key, n] : s.restores) r.restores += n;
  for (const auto& [key, n] : s.create_failures) r.create_failures += n;
  for (const auto& [cgroup, n] : s.process_exits) r.process_exits += n;
  for (const auto& [reason, n] : DroppedEvents(s)) {
    if (n == 0) continue;
    r.events_dropped += n;
    r.events_dropped_by_reason[reason] = n;
  }
  r.queues_peak = run_.peak;
  r.compute_peak = run_.compute_peak;
  r.peak_per_gpu = run_.PeakPerGpu();
  r.gpus_used = r.peak_per_gpu.size();
  const std::vector<PhysicalGpu> physical = PhysicalGpus(s.gpus);
  const std::map<uint32_t, uint32_t> physical_of = PhysicalGpuIndexes(physical);
  std::set<uint32_t> physical_used;
  for (const auto& [gpu_id, peak] : r.peak_per_gpu) {
    const auto p = physical_of.find(gpu_id);
    if (p != physical_of.end()) physical_used.insert(p->second);
  }
  r.physical_gpus_in_topology = physical.size();
  r.physical_gpus_used = physical_used.size();
  r.classification = run_.Class();
  r.compute_classification = run_.ComputeClass();
  r.high_priority_peak = run_class_peaks_.high_priority;
  r.cu_restricted_peak = run_class_peaks_.cu_restricted;
  r.unsampled_peak = run_class_peaks_.unsampled;

  // ---- Hardware queues per (GPU, type) ----
  for (const auto& [key, gt] : gpu_types_) {
    GpuQueueRow row;
    row.gpu_id = key.first;
    auto gpu = s.gpus.find(key.first);
    if (gpu != s.gpus.end()) {
      const std::string gfx = GfxName(gpu->second.gfx_target_version);
      row.gpu_name = gpu->second.name == gfx || gpu->second.name.empty()
                         ? gfx
                         : fmt::format("{} ({})", gpu->second.name, gfx);
    }
    row.queue_type = QueueTypeLabel(key.second);
    row.peak = gt.peak;
    row.at_start = gt.at_start;
    r.queues_at_start += gt.at_start;
    row.at_end = live_at_end[key];
    row.created = created_destroyed[key].first;
    row.destroyed = created_destroyed[key].second;
    row.lifetime = ComputeDurationStats(
        std::vector<uint64_t>(gt.lifetimes_ns.begin(), gt.lifetimes_ns.end()));
    r.gpu_queues.push_back(row);
  }

  // ---- Containers ----
  // The model's rows (the ones --once and top show), summed per container
  // over its cgroups and GPUs.
  std::map<std::string, RowTotals> totals_of;
  for (const auto& [key, t] : RowsByCgroupGpu(s)) {
    totals_of[ContainerKey(key.first)] += t;
  }
  std::map<std::string, uint64_t> exits_of;
  for (const auto& [cgroup, n] : s.process_exits) {
    exits_of[ContainerKey(cgroup)] += n;
  }
  // Containers that only caused preemptions or suffered them also get a row.
  for (const auto& [key, t] : totals_of) {
    if (t.unmaps_caused > 0 || t.Preempted() > 0 || t.off_ns > 0) {
      containers_.try_emplace(key);
    }
  }
  std::map<std::string, Owner> owner_of_key;
  for (auto& [key, c] : containers_) {
    if (c.cgroup_id == 0) {
      for (const auto& [cgroup, k] : container_of_cgroup_) {
        if (k == key) c.cgroup_id = cgroup;
      }
    }
    ContainerRow row;
    row.owner = OwnerOf(s, c.cgroup_id);
    owner_of_key[key] = row.owner;
    row.container_id = key.rfind("cgroup:", 0) == 0 ? "" : key;
    row.processes = c.pids.size();
    row.queues_peak = c.counts.peak;
    row.queues_created = c.counts.created;
    row.peak_per_gpu = c.counts.PeakPerGpu();
    row.gpus_used = row.peak_per_gpu.size();
    row.at_end = totals_of[key];
    row.submissions_mean_per_s = per_s(row.at_end.submissions);
    row.submissions_peak_per_s = BusiestBucket(container_series_, key);
    row.high_priority_peak = class_peaks_[key].high_priority;
    row.cu_restricted_peak = class_peaks_[key].cu_restricted;
    row.unsampled_peak = class_peaks_[key].unsampled;
    row.create_failures = c.create_failures;
    row.process_exits = exits_of[key];
    row.classification = c.counts.Class();
    row.compute_peak = c.counts.compute_peak;
    row.compute_classification = c.counts.ComputeClass();
    r.containers.push_back(row);
  }
  std::sort(r.containers.begin(), r.containers.end(),
            [](const ContainerRow& a, const ContainerRow& b) {
              return a.owner < b.owner;
            });
  // ---- Doorbells per container and GPU, as the families sum them ----
  std::map<std::pair<std::string, uint32_t>, DoorbellRow> doorbells_of;
  for (const auto& [key, series] : s.doorbells) {
    DoorbellRow& row = doorbells_of[{ContainerKey(key.cgroup_id), key.gpu_id}];
    row.owner = OwnerOf(s, key.cgroup_id);
    row.gpu_id = key.gpu_id;
    row.rings += series.doorbells;
    row.kernel_dispatch += series.by_packet[GPUQ_PACKET_DISPATCH] +
                           series.by_packet[GPUQ_PACKET_EXT_DISPATCH];
    row.kernel_dispatch_ext += series.by_packet[GPUQ_PACKET_EXT_DISPATCH];
    row.barrier_dispatches += series.barrier_dispatches;
    row.barrier += series.by_packet[GPUQ_PACKET_BARRIER];
    row.other += series.by_packet[GPUQ_PACKET_OTHER];
    row.unreadable += series.by_packet[GPUQ_PACKET_UNREADABLE];
  }
  for (auto& [key, row] : doorbells_of) r.doorbell_list.push_back(row);
  std::sort(r.doorbell_list.begin(), r.doorbell_list.end(),
            [](const DoorbellRow& a, const DoorbellRow& b) {
              return std::tie(a.owner, a.gpu_id) < std::tie(b.owner, b.gpu_id);
            });
  for (const auto& [key, t] : ContainerGpuRows(s)) {
    ContainerGpuEndRow row;
    row.owner = Owner{key.container, key.pod, key.ns};
    row.gpu_id = key.gpu_id;
    row.totals = t;
    r.container_gpus_at_end.push_back(row);
  }

  // ---- Processes ----
  for (const auto& [pid, p] : processes_) {
    if (p.counts.peak == 0 && p.create_failures == 0) continue;
    ProcessRow row;
    row.owner = OwnerOf(s, p.cgroup_id);
    row.container_id = ContainerKey(p.cgroup_id);
    if (row.container_id.rfind("cgroup:", 0) == 0) row.container_id.clear();
    row.pid = pid;
    row.comm = p.comm;
    row.queues_peak = p.counts.peak;
    row.queues_created = p.counts.created;
    row.peak_per_gpu = p.counts.PeakPerGpu();
    row.gpus_used = row.peak_per_gpu.size();
    row.submissions = submissions_by_tgid[pid];
    row.submissions_mean_per_s = per_s(row.submissions);
    row.submissions_peak_per_s = BusiestBucket(process_series_, pid);
    row.exited = p.exited;
    row.create_failures = p.create_failures;
    row.knobs = p.knobs;
    row.classification = p.counts.Class();
    row.compute_peak = p.counts.compute_peak;
    row.compute_classification = p.counts.ComputeClass();
    r.processes.push_back(row);
  }
  std::sort(r.processes.begin(), r.processes.end(),
            [](const ProcessRow& a, const ProcessRow& b) {
              return std::tie(a.owner, a.pid) < std::tie(b.owner, b.pid);
            });

  // ---- Submissions per GPU and per queue ----
  for (const auto& [gpu, n] : submissions_by_gpu) {
    GpuSubmissionRow row;
    row.gpu_id = gpu;
    row.submissions = n;
    row.mean_per_s = per_s(n);
    row.peak_per_s = BusiestBucket(gpu_rate_series_, gpu);
    row.pending_peak = pending_peak_per_gpu_[gpu];
    r.gpu_submissions.push_back(row);
  }
  // ---- Physical GPUs, where one is partitioned ----
  if (std::any_of(physical.begin(), physical.end(),
                  [](const PhysicalGpu& p) { return p.Partitioned(); })) {
    for (const PhysicalGpu& p : physical) {
      PhysicalGpuRow row;
      row.index = p.index;
      row.pci = p.pci;
      row.gpu_ids = p.gpu_ids;
      r.physical_gpus.push_back(row);
    }
    // The row of a GPU's physical GPU; null where the topology lacks it.
    auto row_of = [&](uint32_t gpu_id) -> PhysicalGpuRow* {
      const auto p = physical_of.find(gpu_id);
      return p == physical_of.end() ? nullptr : &r.physical_gpus[p->second];
    };
    for (const GpuQueueRow& q : r.gpu_queues) {
      if (PhysicalGpuRow* row = row_of(q.gpu_id)) {
        row->at_end += q.at_end;
        row->created += q.created;
      }
    }
    for (const GpuSubmissionRow& g : r.gpu_submissions) {
      if (PhysicalGpuRow* row = row_of(g.gpu_id)) {
        row->submissions += g.submissions;
      }
    }
    for (PhysicalGpuRow& row : r.physical_gpus) {
      row.mean_per_s = per_s(row.submissions);
      const auto live = physical_live_.find(row.pci);
      if (live != physical_live_.end()) row.queues_peak = live->second.peak;
      // Its partitions' rates summed bucket by bucket.
      std::vector<double> rate;
      for (uint32_t gpu : row.gpu_ids) {
        const auto series = gpu_rate_series_.find(gpu);
        if (series == gpu_rate_series_.end()) continue;
        const std::vector<double>& v = series->second.values;
        if (rate.size() < v.size()) rate.resize(v.size(), 0.0);
        for (size_t b = 0; b < v.size(); ++b) rate[b] += v[b];
      }
      for (double v : rate) row.peak_per_s = std::max(row.peak_per_s, v);
    }
  }
  for (size_t i = 0; i < queue_rows_.size(); ++i) {
    QueueSubmissionRow row = queue_rows_[i];
    row.owner = OwnerOf(s, queue_row_cgroups_[i]);
    row.comm = processes_[row.pid].comm;
    r.queue_submissions.push_back(row);
  }
  std::sort(
      r.queue_submissions.begin(), r.queue_submissions.end(),
      [](const QueueSubmissionRow& a, const QueueSubmissionRow& b) {
        // A reused queue id: its queues in the order they were made
        // (std::sort keeps no order among equals).
        return std::tie(a.owner, a.pid, a.gpu_id, a.queue_id, a.created_s) <
               std::tie(b.owner, b.pid, b.gpu_id, b.queue_id, b.created_s);
      });

  // ---- Runlist per (GPU, scheduler) ----
  for (const auto& [key, durations] : runlist_durations_) {
    RunlistRow row;
    row.gpu_id = key.first;
    row.scheduler = key.second ? "mes" : "hws";
    row.unmaps = durations.first.size();
    row.maps = durations.second.size();
    row.unmap = ComputeDurationStats(durations.first);
    row.map = ComputeDurationStats(durations.second);
    const Scheduler sched = key.second ? Scheduler::kMes : Scheduler::kHws;
    for (const auto& [fkey, n] : s.runlist_failures) {
      if (fkey.gpu_id != key.first || fkey.scheduler != sched) continue;
      row.failures[fmt::format("{}:{}", fkey.unmap ? "unmap" : "map",
                               ErrnoLabel(fkey.error))] += n;
    }
    if (auto o = s.oversubscription.find(key.first);
        !key.second && o != s.oversubscription.end()) {
      OversubscriptionFigures f;
      f.maps = o->second.oversubscribed_maps;
      for (size_t k = 0; k < kOversubscriptionReasons; ++k) {
        if (o->second.maps_by_reason[k] == 0) continue;
        f.by_reason[OversubscriptionReasonLabel(
            static_cast<OversubscriptionReason>(k))] =
            o->second.maps_by_reason[k];
      }
      f.seconds = static_cast<double>(o->second.oversubscribed_ns) / 1e9;
      f.at_end = o->second.shape.oversubscribed;
      row.oversubscription = f;
      // The window still open: as the seconds, it is not counted, but the
      // timeline shows it up to the capture's end.
      if (o->second.open_since_ns != 0) {
        AddOversubscribedSlice(key.first, o->second.open_since_ns, last_ns_,
                               o->second.open_shape, true);
      }
    }
    r.runlist.push_back(row);
  }

  // ---- Evictions, create failures ----
  for (size_t i = 0; i < r.eviction_list.size(); ++i) {
    EvictionRow& row = r.eviction_list[i];
    row.owner = OwnerOf(s, eviction_cgroups_[i]);
    row.comm = processes_.count(row.pid) ? processes_[row.pid].comm : "";
    Slice slice;
    slice.track = GpuTrack(row.gpu_id);
    slice.name = fmt::format("evicted: {}", row.trigger);
    slice.start_s = row.start_s;
    slice.duration_s = row.duration_s ? *row.duration_s
                                      : std::max(0.0, duration - row.start_s);
    slice.args = {{"pid", std::to_string(row.pid)},
                  {"container", SeriesName(row.owner)},
                  {"trigger", row.trigger}};
    if (!row.duration_s) {
      slice.args["end"] = row.process_exited ? "process_exit" : "open";
    }
    AddSlice(&r.timeline.evictions, std::move(slice));
  }
  for (const OffWindow& w : off_windows_) {
    const Owner owner = OwnerOf(s, w.key.cgroup_id);
    Slice slice;
    slice.track = GpuTrack(w.key.gpu_id);
    slice.name = fmt::format("off GPU: {}", SeriesName(owner));
    slice.start_s = Rel(w.start_ns);
    slice.duration_s = Seconds(w.end_ns - w.start_ns);
    slice.args = {{"container", SeriesName(owner)},
                  {"scheduler", SchedulerLabel(w.key.scheduler)},
                  {"cause", RunlistCauseLabel(w.key.cause)},
                  {"caused_by", w.key.by_self ? "self" : "other"}};
    if (w.by_cgroup != 0) {
      slice.args["caused_by_container"] = SeriesName(OwnerOf(s, w.by_cgroup));
    }
    r.timeline.off_gpu.push_back(std::move(slice));
  }
  // Who preempted whom, per container (its cgroups folded, as above).
  std::map<std::pair<std::string, std::optional<std::string>>,
           std::pair<PreemptedByRow, uint64_t>>
      preempted_by;  // the row and its ns off the GPU
  for (const auto& [cgroups, n] : preempted_by_) {
    const auto [victim, by] = cgroups;
    auto& [row, off_ns] = preempted_by[{
        ContainerKey(victim),
        by != 0 ? std::optional<std::string>(ContainerKey(by)) : std::nullopt}];
    row.owner = OwnerOf(s, victim);
    if (by != 0) row.by = OwnerOf(s, by);
    row.preemptions += n.preemptions;
    off_ns += n.off_ns;
  }
  for (auto& [keys, row_ns] : preempted_by) {
    row_ns.first.seconds_off_gpu = Seconds(row_ns.second);
    r.preempted_by.push_back(row_ns.first);
  }
  std::sort(r.preempted_by.begin(), r.preempted_by.end(),
            [](const PreemptedByRow& a, const PreemptedByRow& b) {
              return std::tie(a.owner, a.by) < std::tie(b.owner, b.by);
            });
  for (const auto& [key, n] : failures_) {
    CreateFailureRow row;
    row.owner = OwnerOf(s, std::get<0>(key));
    row.pid = std::get<1>(key);
    row.gpu_id = std::get<2>(key);
    row.error = ErrnoLabel(std::get<3>(key));
    row.count = n;
    r.create_failure_list.push_back(row);
  }

  // ---- Timeline: open queues end with the capture ----
  std::vector<std::pair<uint64_t, const LiveQueue*>> open;
  open.reserve(queues_.size());
  for (const auto& [serial, q] : queues_) open.emplace_back(serial, &q);
  std::sort(open.begin(), open.end());  // in the order they were made
  for (const auto& [serial, q] : open) {
    AddLifetimeSlice(*q, &processes_[q->tgid], last_ns_, "open");
  }
  for (auto& [gpu, acc] : gpu_series_) {
    r.timeline.queues_per_gpu.push_back(
        {GpuTrack(gpu), std::move(acc.values), acc.buckets});
  }
  // Containers whose labels coincide (folded, two keys) share one series.
  std::map<std::string, SeriesAcc> by_name;
  for (auto& [key, acc] : container_series_) {
    auto owner = owner_of_key.find(key);
    const std::string name = owner != owner_of_key.end()
                                 ? SeriesName(owner->second)
                                 : SeriesName(Owner{key, "", ""});
    SeriesAcc& sum = by_name[name];
    sum.buckets = std::max(sum.buckets, acc.buckets);
    if (sum.values.size() < acc.values.size())
      sum.values.resize(acc.values.size(), 0.0);
    for (size_t i = 0; i < acc.values.size(); ++i)
      sum.values[i] += acc.values[i];
  }
  for (auto& [name, acc] : by_name) {
    r.timeline.submission_rate_per_container.push_back(
        {name, std::move(acc.values), acc.buckets});
  }
  for (auto& [pid, acc] : process_series_) {
    r.timeline.submission_rate_per_process.push_back(
        {ProcessTrack(pid, processes_[pid].comm), std::move(acc.values),
         acc.buckets});
  }
  return std::move(report_);
}

Analyzer::Analyzer(std::string name, double step_s, uint64_t start_realtime_ns)
    : impl_(
          std::make_unique<Impl>(std::move(name), step_s, start_realtime_ns)) {}
Analyzer::~Analyzer() = default;
void Analyzer::Add(const Event& event) { impl_->Add(event); }
RunReport Analyzer::Finish() { return impl_->Finish(); }

double TimelineStep(const Capture& capture, double step_s) {
  return TimelineStep(SpanOf(capture), capture.events.empty(), step_s);
}

double TimelineStep(const CaptureSpan& span, bool empty, double step_s) {
  if (!(step_s > 0)) step_s = 1.0;
  if (empty) return step_s;
  const uint64_t t0 = span.first_ns;
  const uint64_t last = std::max(span.last_ns, t0);
  const double buckets = Seconds(last - t0) / step_s;
  if (buckets <= static_cast<double>(kMaxTimelineBuckets)) return step_s;
  return std::ceil(buckets / static_cast<double>(kMaxTimelineBuckets)) * step_s;
}

RunReport AnalyzeCapture(const Capture& capture, const std::string& name,
                         double step_s) {
  Analyzer analyzer(name, TimelineStep(capture, step_s),
                    capture.header.start_realtime_ns);
  for (const Event& e : capture.events) analyzer.Add(e);
  return analyzer.Finish();
}

bool AnalyzeCaptureFile(const std::string& path, double step_s,
                        bool allow_truncated, RunReport* out,
                        std::string* error) {
  error->clear();
  // Checked whole first, then analyzed as it is read again: memory holds
  // the analysis and a read buffer, not the capture.
  CaptureError kind = CaptureError::kNone;
  auto stream = CaptureStream::OpenFile(path, &kind, error);
  if (stream == nullptr) return false;
  const CaptureScan scan = ScanCapture(stream.get());
  if (scan.error != CaptureError::kNone) *error = scan.message;
  if (scan.error != CaptureError::kNone &&
      !(scan.error == CaptureError::kTruncated && allow_truncated)) {
    return false;
  }
  Analyzer analyzer(path, TimelineStep(scan.span, scan.records == 0, step_s),
                    stream->header().start_realtime_ns);
  Event event;
  while (stream->Records() < scan.records && stream->Next(&event)) {
    analyzer.Add(event);
  }
  if (stream->Records() < scan.records) {
    *error = stream->Message().empty() ? path + " changed while it was read"
                                       : stream->Message();
    return false;
  }
  *out = analyzer.Finish();
  return true;
}

}  // namespace gpuq::report
