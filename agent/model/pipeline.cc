#include "model/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "common/clock.h"
#include "common/log.h"
#include "model/container_retirement.h"
#include "model/sysfs_seed.h"
#include "resolver/container_metadata_json.h"
#include "sources/kfd_sysfs.h"
#include "sources/source_drops_record.h"

namespace gpuq {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

Pipeline::Pipeline(PipelineOptions options, std::unique_ptr<EventSource> source)
    : options_(std::move(options)),
      source_(std::move(source)),
      // A capture's cgroup ids mean nothing on this host: replay resolves
      // only the paths the capture itself carries.
      resolver_(options_.use_sysfs ? options_.paths.CgroupMount() : ""),
      attributor_(&resolver_),
      v1_cgroup_ids_(options_.paths.procfs),
      // Both lookups run under mu_, which CaptureRecording's caller holds.
      recording_(
          [this](uint64_t cgroup) -> const Attribution& {
            return attributor_.Attribute(cgroup);
          },
          [this](const ContainerIdentity& id) {
            return labeling_.Metadata(id);
          },
          options_.metadata != nullptr),
      labeling_(options_.max_containers, options_.label_allowlist,
                options_.metadata) {
  if (options_.use_sysfs) resolver_.SetLearned(options_.learned_cgroups);
}

void Pipeline::SetProbes(std::vector<ProbeStatus> probes) {
  std::lock_guard<std::mutex> lock(mu_);
  probes_ = std::move(probes);
}

void Pipeline::SetModelObserver(ModelObserver* observer) {
  std::lock_guard<std::mutex> lock(mu_);
  model_.SetObserver(observer);
}

void Pipeline::SetDoorbellMapFull(uint64_t drops) {
  std::lock_guard<std::mutex> lock(mu_);
  doorbell_map_full_ = drops;
}

std::vector<std::string> Pipeline::Start() {
  if (!options_.use_sysfs) return {};
  const SysfsStart start = ReadSysfsStart(options_.paths);
  for (const gpuq_gpu_info_record& gpu : start.gpus) Handle(gpu);
  std::lock_guard<std::mutex> lock(mu_);
  for (const SysfsQueue& q : start.queues) HandleLocked(SeedEventLocked(q));
  return start.warnings;
}

gpuq_queue_create_event Pipeline::SeedEventLocked(const SysfsQueue& q) {
  const SeededQueue s =
      SeedQueue(q, options_.paths, options_.queue_types, resolver_.V2Root());
  if (s.cgroup_path) attributor_.Learn(s.event.hdr.cgroup_id, *s.cgroup_path);
  return s.event;
}

void Pipeline::Handle(const Event& event) {
  std::lock_guard<std::mutex> lock(mu_);
  HandleLocked(event);
}

void Pipeline::HandleRead(const Event& event) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!running_) {
    HandleLocked(event);
    return;
  }
  reads_.push_back(event);
  if (reads_.size() > kWaitingReadsMax) {
    HandleLocked(reads_.front());
    reads_.pop_front();
  }
}

void Pipeline::ApplyReadsBefore(uint64_t ts_ns) {
  std::lock_guard<std::mutex> lock(mu_);
  ApplyReadsBeforeLocked(ts_ns);
}

void Pipeline::ApplyReadsBeforeLocked(uint64_t ts_ns) {
  while (!reads_.empty() && Header(reads_.front()).ts_ns < ts_ns) {
    HandleLocked(reads_.front());
    reads_.pop_front();
  }
}

std::vector<SampleTarget> Pipeline::SampleTargets() {
  std::lock_guard<std::mutex> lock(mu_);
  return model_.SampleTargets();
}

std::optional<DoorbellOwner> Pipeline::FindDoorbell(uint32_t tgid,
                                                    uint64_t handle) {
  std::lock_guard<std::mutex> lock(mu_);
  return model_.FindDoorbell(tgid, handle);
}

std::vector<std::pair<uint32_t, uint64_t>> Pipeline::KnownDoorbells() {
  std::lock_guard<std::mutex> lock(mu_);
  return model_.KnownDoorbells();
}

void Pipeline::RecordTo(CaptureWriter* writer) {
  std::lock_guard<std::mutex> lock(mu_);
  recording_.SetWriter(writer);
}

void Pipeline::FlushRecording() {
  std::lock_guard<std::mutex> lock(mu_);
  recording_.Flush();
}

void Pipeline::RecordOnlyContainer(std::string wanted) {
  std::lock_guard<std::mutex> lock(mu_);
  recording_.OnlyContainer(std::move(wanted));
}

uint64_t Pipeline::RecordedContainerRecords() {
  std::lock_guard<std::mutex> lock(mu_);
  return recording_.ContainerRecords();
}

void Pipeline::FinishRecording() {
  // Names asked for and not answered yet may still match: wait for them
  // (each lookup has --runtime.timeout). Not under mu_: the resolver never
  // takes it.
  if (options_.metadata != nullptr) options_.metadata->WaitIdle();
  std::lock_guard<std::mutex> lock(mu_);
  recording_.Finish();
}

bool Pipeline::StartRecording(CaptureWriter* writer, std::string container,
                              Model::Unrecorded* unrecorded) {
  const Snapshot at_start = TakeSnapshot();
  std::lock_guard<std::mutex> lock(mu_);
  if (recording_.Recording()) return false;
  while (!reads_.empty()) {
    HandleLocked(reads_.front());
    reads_.pop_front();
  }
  drops_at_start_ =
      SourceDropsRecord(at_start.source_drops, at_start.doorbell_map_full, 0);
  recording_.Begin(writer, std::move(container), model_.DoorbellCounts());
  if (unrecorded != nullptr) *unrecorded = model_.Unrecordable();
  for (const Event& event : model_.StateAsRecords(MonotonicNowNs())) {
    const uint64_t cgroup_id = Header(event).cgroup_id;
    if (cgroup_id != 0 &&
        !std::holds_alternative<gpuq_gpu_info_record>(event)) {
      recording_.Attributed(cgroup_id, attributor_.Attribute(cgroup_id));
    }
    recording_.Write(event);
  }
  return true;
}

uint64_t Pipeline::StopRecording() {
  FinishRecording();
  RecordLateMetadata();
  const Snapshot at_end = TakeSnapshot();
  const gpuq_source_drops_record now = SourceDropsRecord(
      at_end.source_drops, at_end.doorbell_map_full, MonotonicNowNs());
  std::lock_guard<std::mutex> lock(mu_);
  recording_.Write(SourceDropsSince(now, drops_at_start_));
  const uint64_t container_records = recording_.ContainerRecords();
  recording_.End();
  return container_records;
}

void Pipeline::HandleLocked(const Event& event) {
  if (const auto* rec = std::get_if<CgroupPathRecord>(&event)) {
    attributor_.Learn(rec->hdr.cgroup_id, rec->path);
    recording_.PathCarried(rec->hdr.cgroup_id);
  } else if (const auto* meta = std::get_if<ContainerMetaRecord>(&event)) {
    const Attribution& a = attributor_.Attribute(meta->hdr.cgroup_id);
    const auto parsed = MetadataFromJson(meta->json);
    if (parsed && a.identity.InContainer()) {
      labeling_.Carry(a.identity.container_id, *parsed);
      recording_.NamesCarried(a.identity.container_id);
    }
    // A recording begun after the cgroup's path record (the recording API)
    // writes the path before these names, or a replay could not place them.
    recording_.Attributed(meta->hdr.cgroup_id, a);
  } else if (std::holds_alternative<gpuq_queue_sample_record>(event)) {
    // Counted under the sampled queue's own (settled, attributed) cgroup:
    // nothing to resolve, once per queue and --sample-interval.
  } else if (!std::holds_alternative<gpuq_gpu_info_record>(event) &&
             Header(event).cgroup_id != 0) {
    // cgroup 0 names no owner (a runlist operation of unknown cause): it
    // gets no container series, so there is nothing to attribute.
    // A kernel event: settle its cgroup id (v1 hosts), then attribute.
    // A capture's ids are final: only live events are settled.
    const auto v1_id = options_.use_sysfs
                           ? v1_cgroup_ids_.Of(Header(event), &attributor_)
                           : std::nullopt;
    if (v1_id) {
      Event rewritten = event;  // copied only on v1 hosts
      std::visit([&](auto& e) { e.hdr.cgroup_id = *v1_id; }, rewritten);
      AttributeLocked(*v1_id);
      ApplyLocked(rewritten);
      return;
    }
    AttributeLocked(Header(event).cgroup_id);
  }
  ApplyLocked(event);
}

void Pipeline::AttributeLocked(uint64_t cgroup_id) {
  // Done for this cgroup already (resolved, admitted, its runtime asked),
  // and no recording needs its path: a busy node's every event would redo
  // it (a tenth of a replay's time). A path learned since (a capture's
  // record, a v1 id) may name another container: all are done again.
  if (attributor_.Learned() != settled_learned_) {
    settled_cgroups_.clear();
    settled_learned_ = attributor_.Learned();
  }
  if (!recording_.Recording() && settled_cgroups_.count(cgroup_id) != 0) {
    return;
  }
  // Resolve now, while the cgroup surely exists; the answer is pinned.
  const Attribution& a = attributor_.Attribute(cgroup_id);
  labeling_.Admit(a);
  // Ask the runtime now, at the container's first event, not at the first
  // scrape: a short-lived container may be removed (and unknown to its
  // runtime) by then. Get() never blocks and asks once.
  if (a.identity.InContainer()) (void)labeling_.Metadata(a.identity);
  recording_.Attributed(cgroup_id, a);
  if (a.resolved) settled_cgroups_.insert(cgroup_id);
}

void Pipeline::ApplyLocked(const Event& event) {
  recording_.Write(event);
  // The model's now times only retirement's grace (seconds): read per
  // event, the coarse clock costs a memory read, a precise one a clock
  // source read (a tenth of a replay's time on a 1M-record capture).
  model_.SetNow(MonotonicCoarseNowNs());
  model_.Apply(event);
}

void Pipeline::RecordLateMetadata() {
  std::lock_guard<std::mutex> lock(mu_);
  recording_.WriteLateNames();
}

Snapshot Pipeline::RecordSourceDrops() {
  Snapshot s = TakeSnapshot();
  const gpuq_source_drops_record r =
      SourceDropsRecord(s.source_drops, s.doorbell_map_full, MonotonicNowNs());
  std::lock_guard<std::mutex> lock(mu_);
  recording_.Write(r);
  return s;
}

void Pipeline::RetireNow() {
  std::lock_guard<std::mutex> lock(mu_);
  model_.SetNow(MonotonicCoarseNowNs());  // the clock ApplyLocked() stamps
  const auto grace = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          options_.container_grace)
          .count());
  RetireContainers(grace, &model_, &attributor_, &labeling_);
  // A retired container is admitted again at its next event.
  settled_cgroups_.clear();
}

bool Pipeline::DrainSource() {
  if (source_ == nullptr) return true;
  constexpr auto kDrainBudget = std::chrono::milliseconds(200);
  const auto until = Clock::now() + kDrainBudget;
  Event event;
  while (Clock::now() < until) {
    switch (source_->Next(&event, std::chrono::milliseconds(0))) {
      case NextStatus::kOk:
        Handle(event);
        break;
      case NextStatus::kTimeout:
      case NextStatus::kEof:
        return true;
      case NextStatus::kError:
        return false;  // Run() reports it at its next read
    }
  }
  return false;
}

void Pipeline::ReconcileNow() {
  // Order matters (docs/architecture.md, "Seeding and reconciliation"):
  // 1. sysfs is read first. amdkfd emits a queue's create event at the
  //    entry of kfd_procfs_add_queue(), before the queue's sysfs entry
  //    exists, so every create behind an entry this read sees is already
  //    in the ring buffer;
  // 2. the source is drained, so the model has applied those creates: a
  //    queue in sysfs but not in the model is then really unknown (lost or
  //    from before the agent), never a create still in flight;
  // 3. the other way round, a queue in the model but not in sysfs can still
  //    have its destroy in flight (on 6.1 kfd_procfs_del_queue() runs
  //    before the HW destroy and uninit_queue(), which may wait for the
  //    scheduler's preemption): the model keeps what reconciliation removes
  //    as a tombstone, so that late destroy is no unknown queue and counts
  //    no second destroy (Model::Forget).
  // A difference is corrected only when two consecutive passes see it. That
  // also covers the tiers whose create record is written at the create
  // ioctl's return, after the sysfs entry exists (create_ioctl without
  // queue_create, the tracepoint tier's sys_exit): a create in flight at one
  // pass has arrived by the next, unless the ioctl outlasts the interval.
  std::vector<SysfsQueue> sysfs;
  std::string error;
  const bool read = ReadKfdQueues(options_.paths.Kfd(), &sysfs, &error);
  // Counted every pass, written once per different error (and again after
  // a pass that read sysfs).
  Log().WriteOnChange(LogLevel::kWarn, "reconciliation", read ? "" : error);
  if (!read) {
    std::lock_guard<std::mutex> lock(mu_);
    reconciler_.CountError();
    return;
  }
  // Not drained within the budget (an event storm): this pass's view could
  // miss creates in flight, so it is not used.
  if (!DrainSource()) return;
  std::lock_guard<std::mutex> lock(mu_);
  const Reconciler::Actions actions = reconciler_.Next(model_.Diff(sysfs));
  LogCorrections(actions);
  // Both as records, recorded too: a capture's replay counts the creates
  // and destroys reconciliation learned of, as the live agent does.
  for (const SysfsQueue& q : actions.add) {
    gpuq_queue_create_event e = SeedEventLocked(q);
    e.flags |= GPUQ_CREATE_F_RECOVERED;
    HandleLocked(e);
  }
  // The queue's cgroup was attributed at its create: applied directly.
  for (const QueueState& q : actions.remove) {
    ApplyLocked(RecoveredDestroy(q, MonotonicNowNs()));
  }
  reconciler_.SetDrift(model_.Diff(sysfs).drift_per_gpu);
}

Pipeline::RunResult Pipeline::Run(const std::atomic<bool>& stop,
                                  std::optional<Clock::time_point> deadline) {
  // Bounds how long a stop request waits (docs/shutdown.md): the source
  // cannot be woken by the signal itself, which lands on any thread.
  constexpr auto kPollSlice = std::chrono::milliseconds(50);
  auto next_reconcile = Clock::now() + options_.reconcile_interval;
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_ = true;
  }
  loop_running_.store(true);
  // Whatever ends the run, the reads still waiting are applied.
  struct EndOfRun {
    Pipeline* pipeline;
    ~EndOfRun() {
      pipeline->loop_running_.store(false);
      std::lock_guard<std::mutex> lock(pipeline->mu_);
      pipeline->running_ = false;
      for (const Event& e : pipeline->reads_) pipeline->HandleLocked(e);
      pipeline->reads_.clear();
    }
  } end_of_run{this};
  while (!stop.load()) {
    const auto now = Clock::now();
    last_pass_.store(now.time_since_epoch().count());
    if (deadline && now >= *deadline) return RunResult::kDeadline;
    // Reads made before this poll wait for what it delivers (HandleRead).
    const uint64_t polled_at = MonotonicNowNs();
    auto until = std::min(now + kPollSlice, next_reconcile);
    if (deadline) until = std::min(until, *deadline);
    const auto timeout = std::max(
        std::chrono::milliseconds(0),
        std::chrono::duration_cast<std::chrono::milliseconds>(until - now));
    if (source_ == nullptr) {
      std::this_thread::sleep_for(timeout);
      ApplyReadsBefore(polled_at);
    } else {
      switch (source_->Next(&burst_[0], timeout)) {
        case NextStatus::kOk:
          if (const NextStatus after = HandleBurst();
              after == NextStatus::kEof || after == NextStatus::kError) {
            if (after == NextStatus::kEof) return RunResult::kEof;
            error_ = source_->Error();
            return RunResult::kError;
          }
          break;
        case NextStatus::kTimeout:
          // Nothing came since the poll began: all before it is in.
          ApplyReadsBefore(polled_at);
          break;
        case NextStatus::kEof:
          return RunResult::kEof;
        case NextStatus::kError:
          error_ = source_->Error();
          return RunResult::kError;
      }
    }
    RecordLateMetadata();
    if (Clock::now() >= next_reconcile) {
      if (options_.use_sysfs) ReconcileNow();
      RetireNow();
      next_reconcile = Clock::now() + options_.reconcile_interval;
    }
  }
  return RunResult::kStopped;
}

NextStatus Pipeline::HandleBurst() {
  // What else the source has ready, taken without the lock (a source may
  // take time) and applied under one: a busy ring buffer or a replay hands
  // over records by the hundred, and a lock and the loop's clock reads per
  // record cost more than the model's work on it.
  // The slots stay from burst to burst: a record is moved over one of its
  // type, not into a fresh one (zeroed, then replaced).
  NextStatus after = NextStatus::kTimeout;
  size_t taken = 1;
  while (taken < burst_.size()) {
    after = source_->Next(&burst_[taken], std::chrono::milliseconds(0));
    if (after != NextStatus::kOk) break;
    ++taken;
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < taken; ++i) {
    const Event& event = burst_[i];
    HandleLocked(event);
    // The ring buffer delivers in the order records were reserved: what
    // the kernel emitted before this one is in.
    ApplyReadsBeforeLocked(Header(event).ts_ns);
  }
  return after;
}

Pipeline::Heartbeat Pipeline::LastHeartbeat() const {
  Heartbeat h;
  h.running = loop_running_.load();
  if (const Clock::rep pass = last_pass_.load(); pass != 0) {
    h.last_pass = Clock::time_point(Clock::duration(pass));
  }
  return h;
}

Snapshot Pipeline::TakeSnapshot() {
  Snapshot s;
  SourceDrops source_drops;
  if (source_ != nullptr) source_drops = source_->Drops();
  std::lock_guard<std::mutex> lock(mu_);
  s.source = source_ != nullptr ? source_->Name() : "sysfs";
  s.probes = probes_;
  static_cast<ModelSeries&>(s) = model_.Series();
  // A replayed capture's events lost before it was written count with the
  // replay's own (records it could not decode).
  s.doorbell_map_full = doorbell_map_full_;
  AddSourceDropsRecord(s.recorded_drops, &source_drops, &s.doorbell_map_full);
  s.source_drops = source_drops;
  s.reconcile_enabled = options_.use_sysfs;
  s.reconcile = reconciler_.stats();

  auto attribute = [&](uint64_t cgroup_id) {
    if (s.attributions.count(cgroup_id) == 0) {
      s.attributions.emplace(cgroup_id, attributor_.Attribute(cgroup_id));
    }
  };
  s.ForEachCgroup(attribute);
  s.cgroups_unresolved = attributor_.UnresolvedTotal();
  if (options_.use_sysfs && options_.learned_cgroups != nullptr) {
    s.learned_cgroups = options_.learned_cgroups->Stats();
  }

  LabelSnapshot(&s, &labeling_);
  s.pid_comm_labels = options_.pid_comm_labels;
  if (s.pid_comm_labels) s.owners = model_.owners();  // only comm needs it
  s.queue_priority = options_.queue_priority;
  if (options_.metadata != nullptr) {
    s.runtime_errors = options_.metadata->Errors();
    s.metadata_evicted = options_.metadata->Evicted();
  }
  return s;
}

}  // namespace gpuq
