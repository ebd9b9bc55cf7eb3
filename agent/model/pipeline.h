// The event loop: source -> attribution -> model (-> capture), plus seeding
// and reconciliation against KFD sysfs, under one lock. TakeSnapshot() is
// the one read path that /metrics and --once share (model/snapshot.h).
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/host_paths.h"
#include "loader/kfd_queue_types.h"
#include "loader/probe_status.h"
#include "loader/queue_priority_applied.h"
#include "model/capture_recording.h"
#include "model/container_labeling.h"
#include "model/model.h"
#include "model/reconciler.h"
#include "model/snapshot.h"
#include "resolver/attributor.h"
#include "resolver/container_metadata.h"
#include "resolver/learned_cgroups.h"
#include "resolver/v1_cgroup_ids.h"
#include "sources/capture.h"
#include "sources/event_source.h"

namespace gpuq {

struct PipelineOptions {
  HostPaths paths;
  /// Live mode: read topology and seed queues from KFD sysfs at start, and
  /// reconcile every `reconcile_interval`. Replay mode: neither (the capture
  /// carries its own topology and seeded queues).
  bool use_sysfs = true;
  std::chrono::milliseconds reconcile_interval{std::chrono::seconds(10)};
  /// Series of a container holding no queue for this long are removed;
  /// idle processes' series fold into their container's.
  std::chrono::milliseconds container_grace{std::chrono::minutes(5)};
  /// Containers with series of their own; later ones fold into
  /// kFoldedContainer until a slot frees up.
  size_t max_containers = 500;
  /// Adds `pid` and `comm` to the queue series (cardinality: per process).
  bool pid_comm_labels = false;
  /// Runtime labels copied onto per-container series as label_<name>.
  std::vector<std::string> label_allowlist;
  /// Names from the container runtime; null: ids only (and what a capture
  /// carries). Must outlive the pipeline.
  MetadataResolver* metadata = nullptr;
  /// cgroup paths learned at creation (CgroupWatcher), for ids first seen
  /// after their cgroup is gone; null: the walk only. Live mode only; must
  /// outlive the pipeline.
  const LearnedCgroups* learned_cgroups = nullptr;
  /// How this kernel numbers queue types in sysfs (seeded queues).
  KfdQueueTypes queue_types = KfdQueueTypesOfRelease("6.18");
  /// Whether this kernel applies queue priorities (live mode only: a
  /// capture does not say which kernel recorded it).
  std::optional<QueuePriorityFact> queue_priority;
};

/// Thread-safety: Run() on one thread; Handle(), TakeSnapshot(),
/// SampleTargets(), FindDoorbell() and KnownDoorbells() from any thread (each
/// takes the pipeline's lock).
class Pipeline {
 public:
  /// `source` may be null: then only sysfs feeds the model.
  Pipeline(PipelineOptions options, std::unique_ptr<EventSource> source);

  /// Reads the GPU topology and seeds the model from sysfs (use_sysfs).
  /// Problems are warnings (returned), never fatal: KFD may be absent.
  std::vector<std::string> Start();

  /// Records every event (and the cgroup paths and topology it needs) to
  /// `writer`, which must outlive the pipeline. Call before Start().
  void RecordTo(CaptureWriter* writer);
  /// Flushes the recording's writer (under the lock its writes hold).
  void FlushRecording();
  /// Records only the processes of container `wanted` (its name, Kubernetes
  /// container name, full or short id: MatchesContainer) through a
  /// RecordFilter (model/record_filter.h says what it holds back and what
  /// always stays). Call before Start().
  void RecordOnlyContainer(std::string wanted);
  /// Decides every held record (after the pending name lookups) and writes
  /// those of the wanted container. Call when Run() has returned and the
  /// last records are in, before closing the writer.
  void FinishRecording();
  /// Starts recording to `writer` while the pipeline runs (the recording
  /// API), only container `container`'s records when not empty. The reads
  /// still waiting are applied first (counted before the capture, as the
  /// agent's metrics count them); the capture begins with the model's state
  /// (Model::StateAsRecords, each cgroup's path and names with it) and goes
  /// on with every event from now. False if a recording is running.
  /// `*unrecorded`, when set, gets what the start could not carry
  /// (Model::Unrecordable).
  bool StartRecording(CaptureWriter* writer, std::string container,
                      Model::Unrecorded* unrecorded = nullptr);
  /// Ends StartRecording()'s: the held records decided, late names, and a
  /// source drops record of what the source lost since its start. The
  /// writer is the caller's to close. Returns the wanted container's
  /// records written (RecordedContainerRecords(); 0 for every container).
  uint64_t StopRecording();
  /// Records of the wanted container's processes written so far (cgroup
  /// paths and names not counted).
  uint64_t RecordedContainerRecords();
  void SetProbes(std::vector<ProbeStatus> probes);
  /// Doorbells the doorbell poller's full kernel maps could not count
  /// (DoorbellPoller::MapFullDrops), monotonic.
  void SetDoorbellMapFull(uint64_t drops);
  /// Told the model's decisions, from Handle()'s thread
  /// (Model::SetObserver). Set before the first event; not owned.
  void SetModelObserver(ModelObserver* observer);

  enum class RunResult { kEof, kStopped, kDeadline, kError };
  /// Processes events until the source ends, `stop` is set, or `deadline`.
  RunResult Run(const std::atomic<bool>& stop,
                std::optional<std::chrono::steady_clock::time_point> deadline);
  /// Why Run() returned kError.
  std::string Error() const { return error_; }

  /// Run()'s loop as /healthz judges it (docs/operations.md): whether Run()
  /// is in its loop, and when the loop last went round (steady clock;
  /// nullopt: never). From any thread, without the lock: a loop stuck
  /// holding it must still be seen as stuck.
  struct Heartbeat {
    bool running = false;
    std::optional<std::chrono::steady_clock::time_point> last_pass;
  };
  Heartbeat LastHeartbeat() const;

  /// Applies one event as if it came from the source (tests, seeding, and
  /// the sampler and doorbell poller threads' records). Recorded when
  /// recording, so a replay reproduces it.
  void Handle(const Event& event);

  /// A reader thread's record (sampler, doorbell poller), read at its
  /// hdr.ts_ns. While Run() runs it waits until the source has delivered
  /// what the kernel emitted before the read: a queue destroyed before the
  /// read, its queue_id taken by a new one, is gone from the model by then
  /// (a sample applied first would count the new queue's index into the
  /// old one's submissions). Otherwise applied at once, like Handle().
  void HandleRead(const Event& event);
  /// Reads waiting for the source at most; beyond it the oldest is applied.
  static constexpr size_t kWaitingReadsMax = 65536;

  /// Live queues with GPUQ_CREATE_F_ROCR_LAYOUT: what the sampler reads.
  std::vector<SampleTarget> SampleTargets();
  /// The queue whose create named doorbell `handle` of process `tgid`.
  std::optional<DoorbellOwner> FindDoorbell(uint32_t tgid, uint64_t handle);
  /// (tgid, handle) learned from queue creates, for the doorbell poller.
  std::vector<std::pair<uint32_t, uint64_t>> KnownDoorbells();
  /// One reconciliation pass against sysfs now: reads sysfs, drains the
  /// source, then compares (see the comment in pipeline.cc). Call it from
  /// the thread that runs Run(), or when Run() is not running.
  void ReconcileNow();
  /// Folds idle processes and removes containers gone for the grace period.
  void RetireNow();

  Snapshot TakeSnapshot();

  /// Records the metadata that arrived after a container's events were
  /// recorded (the runtime answered late): a capture of a container that
  /// ran for a second still names it.
  /// Run() does it between events; call it once more before closing.
  void RecordLateMetadata();
  /// Ends a capture with what the source lost before its records could
  /// reach it (a gpuq_source_drops_record of TakeSnapshot()'s drops), so a
  /// replay and a report count them. Returns the snapshot it took.
  Snapshot RecordSourceDrops();

 private:
  void HandleLocked(const Event& event);
  /// Applies the waiting reads made before `ts_ns` (CLOCK_MONOTONIC).
  void ApplyReadsBefore(uint64_t ts_ns);
  void ApplyReadsBeforeLocked(uint64_t ts_ns);
  /// Applies burst_[0] and up to kBurstMax - 1 more records the source has
  /// ready now; returns what the source answered last (kOk at the cap).
  NextStatus HandleBurst();
  /// Applies every event the source has ready, for at most 200 ms; false if
  /// it was not emptied (or failed).
  bool DrainSource();
  /// Attributes a kernel event's (final) cgroup id: pins it, admits its
  /// container under the cap, and records its path and metadata.
  void AttributeLocked(uint64_t cgroup_id);
  /// Records the event (when recording) and applies it to the model.
  void ApplyLocked(const Event& event);
  gpuq_queue_create_event SeedEventLocked(const SysfsQueue& q);

  PipelineOptions options_;
  std::unique_ptr<EventSource> source_;
  std::mutex mu_;
  CgroupResolver resolver_;
  Attributor attributor_;
  V1CgroupIds v1_cgroup_ids_;  ///< live events on cgroup v1 hosts
  Model model_;
  Reconciler reconciler_;
  CaptureRecording recording_;
  /// What the source had lost when StartRecording() began.
  gpuq_source_drops_record drops_at_start_{};
  uint64_t doorbell_map_full_ = 0;
  std::vector<ProbeStatus> probes_;
  bool running_ = false;                   ///< Run() is reading the source
  std::atomic<bool> loop_running_{false};  ///< LastHeartbeat()
  /// The steady clock's time_since_epoch() at the loop's last pass; 0: never.
  std::atomic<std::chrono::steady_clock::rep> last_pass_{0};
  std::deque<Event> reads_;  ///< HandleRead()'s, oldest first
  /// cgroups AttributeLocked() resolved, admitted and asked the runtime
  /// about since the last RetireNow().
  std::unordered_set<uint64_t> settled_cgroups_;
  uint64_t settled_learned_ = 0;  ///< attributor_.Learned() they hold for
  /// Run()'s records taken from the source in one go (HandleBurst).
  static constexpr size_t kBurstMax = 256;
  std::vector<Event> burst_ = std::vector<Event>(kBurstMax);
  ContainerLabeling labeling_;
  std::string error_;
};

}  // namespace gpuq
