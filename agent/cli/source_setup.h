// What every command that runs the pipeline sets up the same way: the event
// source (live BPF or a capture), the runtime name lookups, the pipeline's
// options and the submission readers. Shared by the daemon, --once, record
// and top, so they cannot drift apart.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cli/options.h"
#include "common/periodic_thread.h"
#include "loader/bpf_loader.h"
#include "loader/probe_status.h"
#include "model/pipeline.h"
#include "resolver/container_metadata.h"
#include "resolver/learned_cgroups.h"
#include "resolver/runtime_events.h"
#include "sources/capture.h"
#include "sources/cgroup_watcher.h"
#include "sources/event_source.h"
#include "submissions/submission_readers.h"

namespace gpuq {

/// The pipeline's methods as the submission readers' sinks. `kernel_probes`
/// are the kernel hooks' statuses, which the doorbell rows are appended to.
SubmissionSinks PipelineSinks(Pipeline* pipeline,
                              std::vector<ProbeStatus> kernel_probes);

/// What the command line asks of the submission readers.
SubmissionOptions SubmissionOptionsOf(const Options& options);

inline constexpr const char* kNoPrivileges =
    "gpuq-agent needs root (or CAP_BPF with CAP_PERFMON, or CAP_SYS_ADMIN) to "
    "load its kernel probes; run it as root, or read a capture with --replay "
    "FILE";

/// Each as a warning of the agent's logger.
void PrintWarnings(const std::vector<std::string>& warnings);

/// The event source and what keeps it alive.
struct SourceSetup {
  std::unique_ptr<BpfLoader> loader;  // must outlive the source
  std::unique_ptr<EventSource> source;
  std::vector<ProbeStatus> probes;
  std::string tier_summary;  ///< which probe tiers run, in one line
  bool replay = false;
  CaptureSpan capture_span;  ///< --replay: when its records happened
  std::string error;         ///< set when no source could be made
};

/// --replay FILE: the capture (whole, validated); else the kernel probes.
SourceSetup MakeSource(const Options& options);

/// The container runtimes to ask for names: Docker Engine API sockets
/// (dockerd, podman), then OCI bundles (containerd, CRI-O). None in replay:
/// a capture carries the names it was recorded with.
std::unique_ptr<MetadataResolver> MakeMetadataResolver(const Options& options,
                                                       bool replay);

/// Follows each Docker API socket's events, so names are asked when
/// containers start (null `metadata`: none). Destroy before `metadata`.
std::vector<std::unique_ptr<DockerEventsWatcher>> WatchRuntimeEvents(
    const Options& options, MetadataResolver* metadata);

/// Paths of container cgroups learned as they are created, so ids first seen
/// after their cgroup is gone still resolve. Live mode with BPF privileges
/// only; a watcher that cannot start is a warning (the walk still resolves
/// cgroups that exist), and its probes are reported as not attached.
struct CgroupLearning {
  std::unique_ptr<LearnedCgroups> learned;
  std::unique_ptr<CgroupWatcher> watcher;  // declared last: stops first
};
CgroupLearning StartCgroupLearning(const Options& options, bool replay,
                                   std::vector<ProbeStatus>* probes);

PipelineOptions PipelineOptionsFor(const Options& options, bool replay,
                                   MetadataResolver* metadata,
                                   const CgroupLearning& cgroups);

/// How one command's live session differs from the others'.
struct LiveSessionOptions {
  /// Runs the submission readers every period on a thread of their own (the
  /// daemon, record and top); --once reads them at its window's ends only.
  bool tick = false;
  /// Called before Pipeline::Start(): record sets its recorder here, so the
  /// capture starts with the state at its start.
  std::function<void(Pipeline*)> before_start;
  /// Where Pipeline::Start()'s warnings go (top shows them on its screen);
  /// null: stderr.
  std::vector<std::string>* start_warnings = nullptr;
};

/// The pipeline of one command and everything it runs with, set up the same
/// way by the daemon, --once, record and top. Members go in reverse order of
/// their stopping: the ticker first, then the readers, the pipeline, the
/// watchers and the resolver it uses, and the loader last.
struct LiveSession {
  SourceSetup setup;  // its source is the pipeline's now
  std::unique_ptr<MetadataResolver> metadata;
  std::vector<std::unique_ptr<DockerEventsWatcher>> runtime_events;
  CgroupLearning cgroups;
  std::unique_ptr<Pipeline> pipeline;
  std::unique_ptr<SubmissionReaders> readers;  // null: none
  std::unique_ptr<PeriodicThread> ticker;      // null: none
};

/// Runtime name lookups (and their events watchers), cgroup learning, the
/// pipeline on `setup`'s source with its probes (the cgroup watcher's
/// added), started, and its submission readers after one first round (the
/// baseline of every queue seen without a create event; none in replay: a
/// capture carries the samples and counts it recorded).
LiveSession StartLiveSession(const Options& options, SourceSetup setup,
                             const LiveSessionOptions& how);

}  // namespace gpuq
