// What `gpuq-agent report` knows about one recorded run: every figure the
// users' ftrace-and-grep workflow computed by hand (queues per GPU and type,
// submissions, preemptions, evictions, the single-queue / one-per-GPU /
// more-than-GPUs classification), plus the time series and slices the HTML
// and Perfetto outputs draw. Built from a capture by AnalyzeCapture()
// (run_analysis.h), which feeds the capture through the same Pipeline and
// Model as /metrics, so a report cannot disagree with the agent.
//
// Times are seconds since the capture's first record (t = 0), as doubles.
// Renderers (text, markdown, json, html, perfetto) only read this struct.
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/container_rows.h"

namespace gpuq::report {

/// Who a series belongs to: the exported container labels ("" = host).
struct Owner {
  std::string container;  ///< as the `container` label; "" for host processes
  std::string pod;
  std::string ns;
  bool operator<(const Owner& o) const;
  bool operator==(const Owner& o) const;
};

/// The users' verdict for a queue-level preemption design.
enum class QueueClass {
  kNone,         ///< no hardware queue at all
  kSingleQueue,  ///< at most one queue at any time: "design fits"
  kOnePerGpu,  ///< at most one per GPU, several GPUs: "batched suspend/resume"
  kMoreThanGpus,  ///< more queues than GPUs used: "selective preemption"
};

/// Percentiles of a set of durations (seconds); count 0 = no samples.
struct DurationStats {
  uint64_t count = 0;
  double sum = 0, min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

/// Hardware queues of one (GPU, queue type) over the run.
struct GpuQueueRow {
  uint32_t gpu_id = 0;
  std::string gpu_name;    ///< "MI300X (gfx942)" when the topology has it
  std::string queue_type;  ///< QueueTypeLabel(): "compute", "sdma", ...
  uint64_t peak = 0;       ///< most live at once
  uint64_t at_end = 0;     ///< live after the last record
  uint64_t at_start = 0;   ///< live at t = 0 (seeded from sysfs)
  uint64_t created = 0;
  uint64_t destroyed = 0;
  DurationStats lifetime;  ///< of queues created and destroyed in the run
};

/// One process that held queues during the run.
struct ProcessRow {
  Owner owner;
  uint32_t pid = 0;
  std::string comm;
  uint64_t queues_peak = 0;  ///< most live at once, all GPUs and types
  uint64_t queues_created = 0;
  std::map<uint32_t, uint64_t> peak_per_gpu;  ///< gpu_id -> most live at once
  uint64_t submissions = 0;
  bool exited = false;
  QueueClass classification = QueueClass::kNone;
  // Added by the analysis core (report-core):
  std::string container_id;   ///< full id of its container, "" = host
  uint64_t gpus_used = 0;     ///< GPUs it held a queue on
  uint64_t compute_peak = 0;  ///< most live compute queues at once
  QueueClass compute_classification = QueueClass::kNone;
  double submissions_mean_per_s = 0;  ///< submissions / run duration
  double submissions_peak_per_s = 0;  ///< busiest timeline bucket
  uint64_t create_failures = 0;
  /// Its runtime knobs (RuntimeKnobsLabel): "" none set, nullopt not read.
  std::optional<std::string> knobs;
};

/// One container (or the host) over the run.
struct ContainerRow {
  Owner owner;
  std::string container_id;  ///< full id, "" for the host
  uint64_t processes = 0;
  uint64_t queues_peak = 0;
  uint64_t queues_created = 0;
  std::map<uint32_t, uint64_t> peak_per_gpu;
  uint64_t gpus_used = 0;
  /// The one row model's figures after the last record (what --once and
  /// top show for it), summed over its cgroups and GPUs: submissions,
  /// unmaps its operations caused, times its queues were taken off a GPU
  /// (by its own operations and by others') and the time they were off,
  /// evictions, unsampled queues at the end...
  RowTotals at_end;
  double submissions_mean_per_s = 0;  ///< at_end.submissions / duration
  double submissions_peak_per_s = 0;
  uint64_t create_failures = 0;
  /// Most of its queues at once at amdkfd's high pipe priority, and fenced
  /// by a CU mask to a subset of the GPU's CUs: the model's gauges
  /// (gpuq_queues_by_priority, gpuq_queues_cu_masked) read at every
  /// timeline bucket's end.
  uint64_t high_priority_peak = 0;
  uint64_t cu_restricted_peak = 0;
  /// Its live compute queues whose submissions were not counted
  /// (gpuq_unsampled_queues): most at once, read at every timeline bucket's
  /// end (at the end: at_end.Unsampled()). Where both are 0 its
  /// submissions are complete.
  uint64_t unsampled_peak = 0;
  QueueClass classification = QueueClass::kNone;
  // Added by the analysis core (report-core):
  uint64_t compute_peak = 0;
  QueueClass compute_classification = QueueClass::kNone;
  uint64_t process_exits = 0;
};

/// A partitioned physical GPU (CPX, DPX): its partitions' figures summed.
struct PhysicalGpuRow {
  uint32_t index = 0;  ///< amd-smi's socket order (resolver/gpu_topology.h)
  std::string pci;     ///< "dddd:bb:dd"
  std::vector<uint32_t> gpu_ids;  ///< its partitions, in partition order
  uint64_t queues_peak = 0;  ///< most live queues at once, partitions summed
  uint64_t at_end = 0;       ///< live queues after the last record
  uint64_t created = 0;
  uint64_t submissions = 0;
  double mean_per_s = 0;  ///< submissions / run duration
  double peak_per_s = 0;  ///< busiest bucket of its partitions' rates summed
};

/// Submissions of one GPU (added by the analysis core).
struct GpuSubmissionRow {
  uint32_t gpu_id = 0;
  uint64_t submissions = 0;
  double mean_per_s = 0;      ///< submissions / run duration
  double peak_per_s = 0;      ///< busiest timeline bucket
  uint64_t pending_peak = 0;  ///< most packets waiting at once on this GPU
};

/// Submissions of one sampled queue.
struct QueueSubmissionRow {
  Owner owner;
  uint32_t pid = 0;
  uint32_t gpu_id = 0;
  uint32_t queue_id = 0;
  /// When the queue was created (0 for one found at start): amdkfd reuses a
  /// queue id once its queue is gone, so a process's "queue 1" can be
  /// several queues, one row each.
  double created_s = 0;
  std::string queue_type;
  uint64_t submissions = 0;
  uint64_t pending_peak = 0;
  // Added by the analysis core (report-core):
  std::string comm;
  uint64_t samples = 0;  ///< readable samples
};

/// An HWS GPU's oversubscribed runlists (gpuq_runlist_oversubscribed_*).
struct OversubscriptionFigures {
  uint64_t maps = 0;                          ///< runlists built oversubscribed
  std::map<std::string, uint64_t> by_reason;  ///< "compute_queues" -> maps
  double seconds = 0;   ///< closed windows, as /metrics counts them
  bool at_end = false;  ///< the last runlist built is oversubscribed
};

/// Runlist preemption on one (GPU, scheduler).
struct RunlistRow {
  uint32_t gpu_id = 0;
  std::string scheduler;  ///< "hws" or "mes"
  uint64_t unmaps = 0;
  uint64_t maps = 0;
  DurationStats unmap;
  DurationStats map;
  std::map<std::string, uint64_t> failures;  ///< "unmap:ETIME" -> count
  /// HWS in a BTF tier: the runlists its maps read; none where no map read
  /// one (the args-kprobe and tracepoint tiers, some captures of ABI minor 0).
  std::optional<OversubscriptionFigures> oversubscription;
};

struct EvictionRow {
  Owner owner;
  uint32_t pid = 0;
  uint32_t gpu_id = 0;
  std::string trigger;  ///< EvictionTriggerLabel()
  double start_s = 0;
  std::optional<double> duration_s;  ///< until restore; none if not restored
  // Added by the analysis core (report-core):
  std::string comm;
  bool process_exited = false;  ///< ended by its process's exit, no restore
};

struct CreateFailureRow {
  Owner owner;
  uint32_t pid = 0;
  uint32_t gpu_id = 0;
  std::string error;  ///< errno name, "ENOMEM"
  uint64_t count = 0;
};

/// Who preempted whom: a container's queues taken off a GPU by the
/// operations of processes in another container (or its own), summed over
/// GPUs. The rows of one victim add up to its preemptions and seconds off
/// the GPU (gpuq_queue_preemptions_total, gpuq_queue_preempted_seconds_total).
struct PreemptedByRow {
  Owner owner;                 ///< whose queues
  std::optional<Owner> by;     ///< whose operation; none: no process (reset,
                               ///< suspend)
  uint64_t preemptions = 0;    ///< as counted at the unmap (MES remove)
  double seconds_off_gpu = 0;  ///< windows closed by the map (MES add)
};

/// A container's doorbell rings on a GPU and the AQL packets they
/// published, by the type of each packet's header
/// (gpuq_doorbells_total, gpuq_doorbell_packets_total). HIP 7 rings once per
/// batch of a graph's packets, so the packets, not the rings, count the work.
struct DoorbellRow {
  Owner owner;
  uint32_t gpu_id = 0;  ///< 0: the queue's create was not seen ("unknown")
  uint64_t rings = 0;
  uint64_t kernel_dispatch = 0;      ///< HSA's and AMD's extended ones
  uint64_t kernel_dispatch_ext = 0;  ///< of those, AMD's extended (gfx1250)
  uint64_t barrier_dispatches = 0;   ///< of those, with the barrier bit set
  uint64_t barrier = 0;
  uint64_t other = 0;       ///< other vendor-specific, agent dispatch, invalid
  uint64_t unreadable = 0;  ///< header not readable
  uint64_t Packets() const {
    return kernel_dispatch + barrier + other + unreadable;
  }
};

/// A container on a GPU at the capture's end: the row `--once` shows, for
/// containers that still have series there (its columns: RowColumns()).
struct ContainerGpuEndRow {
  Owner owner;
  uint32_t gpu_id = 0;
  RowTotals totals;
};

// ---- Time series and slices (HTML charts, Perfetto tracks) ----

/// A value per time bucket (bucket i covers [i*step, (i+1)*step)), over
/// size() buckets. The stored values may stop before the last bucket: the
/// buckets after them are zero, so a rate series of an owner whose queues
/// went unsampled (thousands on a busy node) costs no memory.
struct Series {
  std::string name;            ///< legend: "gpu 11437", "vllm", ...
  std::vector<double> values;  ///< the first values.size() buckets
  size_t buckets = 0;          ///< its length, when longer than values

  size_t size() const { return std::max(buckets, values.size()); }
  double at(size_t k) const { return k < values.size() ? values[k] : 0.0; }
  /// Every bucket's value, the zeros after `values` included.
  std::vector<double> Dense() const;
};

/// A span on a track (queue lifetime, unmap, map, eviction).
struct Slice {
  std::string track;  ///< "gpu 11437", "pid 4242 (python3)"
  std::string
      name;  ///< "compute queue 3", "unmap (all_queues)", "evicted: svm"
  double start_s = 0;
  double duration_s = 0;  ///< open slices end at the capture's end
  std::map<std::string, std::string> args;  ///< shown in Perfetto's details
};

/// What a queue's lifetime shares with many others: its GPU, queue type,
/// how it ended and whether it was there at the capture's start. Interned
/// in the Timeline (lifetime_kinds).
struct LifetimeKind {
  uint32_t gpu_id = 0;
  uint32_t queue_type = 0;
  uint32_t end = 0;     ///< Timeline::lifetime_ends ("ioctl", "open", ...)
  bool seeded = false;  ///< found at the capture's start

  bool operator<(const LifetimeKind& o) const;
};

/// A queue's lifetime on the timeline. A busy capture has hundreds of
/// thousands, so each is four words: its track ("pid 4242 (python3)") and
/// its kind are indexes into the Timeline's interned ones;
/// Timeline::LifetimeSlice() draws it.
struct QueueLifetime {
  uint32_t track = 0;  ///< Timeline::lifetime_tracks
  uint32_t kind = 0;   ///< Timeline::lifetime_kinds
  uint32_t queue_id = 0;
  double start_s = 0;
  double duration_s = 0;  ///< open ones end at the capture's end
};
static_assert(sizeof(QueueLifetime) == 32,
              "four words: the report keeps up to kMaxSlicesPerList of them");

struct Timeline {
  double step_s = 1.0;                 ///< bucket width of every Series
  std::vector<Series> queues_per_gpu;  ///< live queues at the bucket's end
  std::vector<Series> submission_rate_per_container;  ///< packets/s in bucket
  /// track: per process. A deque: a busy capture's hundreds of thousands
  /// grow in blocks, never copied to a vector twice their size.
  std::deque<QueueLifetime> queue_lifetimes;
  std::vector<std::string> lifetime_tracks;  ///< QueueLifetime::track's names
  std::vector<LifetimeKind> lifetime_kinds;  ///< QueueLifetime::kind's
  std::vector<std::string> lifetime_ends;    ///< LifetimeKind::end's names
  std::vector<Slice> runlist_ops;  ///< track: per GPU (unmaps and maps)
  std::vector<Slice> evictions;    ///< track: per GPU
  /// Windows a container's queues were off the GPU after a preemption
  /// (gpuq_queue_preempted_seconds_total's), track: per GPU.
  std::vector<Slice> off_gpu;
  /// Windows an HWS GPU's runlist was oversubscribed, from the map that
  /// built it to the unmap that took it off (the seconds of
  /// gpuq_runlist_oversubscribed_seconds_total), track: per GPU; the one
  /// still open ends with the capture.
  std::vector<Slice> oversubscribed;
  // Added by the analysis core (report-core):
  /// Packets/s per process in each bucket (name "pid 4242 (python3)").
  std::vector<Series> submission_rate_per_process;
  /// Slices left out of the slice lists beyond kMaxSlicesPerList each
  /// (figures and percentiles still count them).
  uint64_t slices_omitted = 0;

  /// Appends `l` (its track from LifetimeTrack()), of GPU `gpu_id` and
  /// type `queue_type`, ended as `end` (kind and end interned here).
  void AddLifetime(QueueLifetime l, uint32_t gpu_id, uint32_t queue_type,
                   const std::string& end, bool seeded = false);
  /// `track`'s index in lifetime_tracks (added at its first use).
  uint32_t LifetimeTrack(const std::string& track);
  /// `l`'s slice name: "compute queue 3".
  std::string LifetimeName(const QueueLifetime& l) const;
  /// The same into `*name` (its buffer reused: a writer names 200,000).
  void LifetimeName(const QueueLifetime& l, std::string* name) const;
  /// `l` as the slice the outputs draw: "compute queue 3" on its track,
  /// with its args (ForEachLifetimeArg).
  Slice LifetimeSlice(const QueueLifetime& l) const;
  /// `l`'s slice args in key order, as Slice::args keeps them: its end,
  /// GPU, queue id and type, and whether it was seeded. The one rule the
  /// JSON and Perfetto writers use to write a lifetime without a Slice.
  void ForEachLifetimeArg(
      const QueueLifetime& l,
      const std::function<void(std::string_view, std::string_view)>& f) const;

 private:
  std::map<std::string, uint32_t> track_index_;
  std::map<std::string, uint32_t> end_index_;
  std::map<LifetimeKind, uint32_t> kind_index_;
};

/// Everything about one capture.
struct RunReport {
  std::string name;   ///< the capture's file name, as given
  std::string label;  ///< `report LABEL=PATH`'s label; "" when none
  uint64_t start_realtime_ns = 0;
  double duration_s = 0;
  uint64_t records = 0;
  uint64_t gpus_in_topology = 0;
  uint64_t gpus_used = 0;
  /// The physical GPUs those are or are partitions of (CPX, DPX): as many
  /// as the GPUs unless one is partitioned.
  uint64_t physical_gpus_in_topology = 0;
  uint64_t physical_gpus_used = 0;

  uint64_t queues_peak = 0;  ///< most live at once, whole host
  uint64_t queues_at_end = 0;
  uint64_t queues_created = 0;
  uint64_t queues_destroyed = 0;
  uint64_t submissions = 0;
  double submissions_mean_per_s = 0;
  double submissions_peak_per_s = 0;
  uint64_t pending_peak = 0;
  uint64_t doorbells = 0;
  uint64_t unmaps = 0;
  uint64_t maps = 0;
  uint64_t evictions = 0;
  uint64_t create_failures = 0;
  uint64_t process_exits = 0;
  QueueClass classification = QueueClass::kNone;  ///< of the whole run
  // Added by the analysis core (report-core):
  uint64_t queues_at_start = 0;  ///< seeded (found in sysfs at start)
  std::map<uint32_t, uint64_t> peak_per_gpu;  ///< gpu_id -> most live at once
  uint64_t compute_peak = 0;
  QueueClass compute_classification = QueueClass::kNone;
  /// As ContainerRow's, over the whole host.
  uint64_t high_priority_peak = 0;
  uint64_t cu_restricted_peak = 0;
  uint64_t unsampled_peak = 0;
  uint64_t restores = 0;
  uint64_t runlist_failures = 0;
  /// gpuq_events_dropped_total at the capture's end: its sum and each
  /// reason above 0 (DroppedEvents(), so a new reason reaches the report).
  uint64_t events_dropped = 0;
  std::map<std::string, uint64_t> events_dropped_by_reason;
  /// Every physical GPU, where one of them is partitioned; else none.
  std::vector<PhysicalGpuRow> physical_gpus;
  std::vector<GpuSubmissionRow> gpu_submissions;

  std::vector<ContainerRow> containers;
  std::vector<ProcessRow> processes;
  std::vector<GpuQueueRow> gpu_queues;
  std::vector<QueueSubmissionRow> queue_submissions;
  std::vector<RunlistRow> runlist;
  std::vector<EvictionRow> eviction_list;
  std::vector<CreateFailureRow> create_failure_list;
  std::vector<ContainerGpuEndRow> container_gpus_at_end;
  std::vector<PreemptedByRow> preempted_by;
  std::vector<DoorbellRow> doorbell_list;  ///< by container, then GPU
  Timeline timeline;
};

/// A runlist slice that takes queues off the GPU: an HWS unmap or an MES
/// queue removal (named so by the analysis); the rest are maps and adds.
bool IsUnmap(const Slice& s);
/// `r`'s unmap durations over all GPUs, shortest first, from its timeline's
/// runlist slices.
std::vector<double> UnmapDurations(const RunReport& r);

/// The oversubscription figures of `r`'s HWS GPUs summed (maps, seconds;
/// at_end if any GPU's last runlist is); none if no map read a runlist.
std::optional<OversubscriptionFigures> OversubscribedTotals(const RunReport& r);

/// "what=n" for each entry of `counts`, in its order, joined by `separator`
/// (a runlist row's failures, an oversubscription's reasons).
std::string JoinCounts(const std::map<std::string, uint64_t>& counts,
                       const char* separator);

/// One container's preemptions across several runs, matched by its
/// `container` label ("(host)" for host processes): the comparison's rows.
struct ComparedPreemption {
  std::string container;
  /// Per run, in the runs' order: times its queues were taken off a GPU (by
  /// its own operations and others') and seconds they were off; none: the
  /// container is not in that run.
  std::vector<std::optional<std::pair<uint64_t, double>>> runs;
};
/// Times containers' queues were taken off a GPU in `r`, summed over its
/// containers (one unmap of three containers' queues counts three times),
/// and the seconds they were off.
std::pair<uint64_t, double> PreemptedTotals(const RunReport& r);
/// The containers whose queues were preempted in any of `runs`, by name.
std::vector<ComparedPreemption> ComparePreemptions(
    const std::vector<RunReport>& runs);

/// The seconds every eviction of `r` kept its queues off the GPU, summed (an
/// eviction still open at the end counts nothing).
double EvictedSeconds(const RunReport& r);

/// "single queue", "one per GPU", "more queues than GPUs", "no queues".
const char* QueueClassName(QueueClass c);
/// The users' design verdict: "design fits", "needs batched suspend/resume",
/// "needs selective preemption", "-".
const char* QueueClassVerdict(QueueClass c);

}  // namespace gpuq::report
