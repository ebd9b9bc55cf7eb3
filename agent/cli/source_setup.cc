#include "cli/source_setup.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "common/log.h"
#include "loader/kernel_features.h"
#include "loader/kfd_queue_types.h"
#include "resolver/docker_api_client.h"
#include "resolver/oci_bundle_client.h"
#include "sources/bpf_source.h"
#include "sources/capture.h"
#include "sources/replay_source.h"

namespace gpuq {

SourceSetup MakeSource(const Options& options) {
  SourceSetup setup;
  if (!options.replay.empty()) {
    setup.replay = true;
    // Checked whole first (a replay never stops half way on bad input),
    // then streamed: memory holds a read buffer, not the capture.
    CaptureError kind = CaptureError::kNone;
    auto stream = CaptureStream::OpenFile(options.replay, &kind, &setup.error);
    if (stream == nullptr) return setup;
    const CaptureScan scan = ScanCapture(stream.get());
    if (scan.error != CaptureError::kNone &&
        !(scan.error == CaptureError::kTruncated && options.allow_truncated)) {
      setup.error = scan.message;
      return setup;
    }
    if (scan.error == CaptureError::kTruncated) {
      Log().Write(LogLevel::kWarn, scan.message);
    }
    setup.capture_span = scan.span;
    setup.source =
        std::make_unique<StreamReplaySource>(std::move(stream), scan.records);
    return setup;
  }
  if (!HasBpfPrivileges()) {
    setup.error = kNoPrivileges;
    return setup;
  }
  BpfLoader::Options load_options{options.paths, options.allow_fentry,
                                  options.probe_tier, options.btf_path};
  setup.loader = BpfLoader::Load(load_options, &setup.probes, &setup.error,
                                 &setup.tier_summary);
  if (setup.loader == nullptr) return setup;
  auto source = std::make_unique<BpfEventSource>(setup.loader->EventsFd(),
                                                 setup.loader->DropsFd(),
                                                 setup.loader->ProgramFds());
  if (!source->Ok()) {
    setup.error = source->Error();
    return setup;
  }
  setup.source = std::move(source);
  return setup;
}

/// The Docker Engine API sockets present at start (a runtime this host does
/// not run is not an error worth counting).
std::vector<std::string> DockerSockets(const Options& options) {
  std::vector<std::string> sockets = options.docker_sockets;
  if (sockets.empty()) {
    sockets = {options.host_root + "/var/run/docker.sock",
               options.host_root + "/run/podman/podman.sock"};
  }
  std::vector<std::string> present;
  for (const std::string& socket : sockets) {
    if (access(socket.c_str(), F_OK) == 0) present.push_back(socket);
  }
  return present;
}

std::unique_ptr<MetadataResolver> MakeMetadataResolver(const Options& options,
                                                       bool replay) {
  if (replay || !options.runtime_lookup) return nullptr;
  std::vector<std::unique_ptr<RuntimeClient>> clients;
  for (const std::string& socket : DockerSockets(options)) {
    clients.push_back(MakeDockerApiClient(socket, options.runtime_timeout));
  }
  clients.push_back(MakeOciBundleClient(
      options.run_dir.empty() ? options.host_root + "/run" : options.run_dir));
  MetadataResolver::Options resolver_options;
  // A name stays as long as the series it labels may (see Pipeline).
  resolver_options.retention =
      std::max(options.container_grace,
               std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::minutes(1)));
  return std::make_unique<MetadataResolver>(std::move(clients),
                                            resolver_options);
}

std::vector<std::unique_ptr<DockerEventsWatcher>> WatchRuntimeEvents(
    const Options& options, MetadataResolver* metadata) {
  std::vector<std::unique_ptr<DockerEventsWatcher>> watchers;
  if (metadata == nullptr) return watchers;
  for (const std::string& socket : DockerSockets(options)) {
    watchers.push_back(std::make_unique<DockerEventsWatcher>(socket, metadata));
  }
  return watchers;
}

CgroupLearning StartCgroupLearning(const Options& options, bool replay,
                                   std::vector<ProbeStatus>* probes) {
  CgroupLearning out;
  if (replay || !HasBpfPrivileges()) return out;
  // Room for this many container cgroups at once (created and not yet
  // forgotten); beyond it the oldest are evicted and counted.
  constexpr size_t kLearnedCgroupCapacity = 16384;
  out.learned = std::make_unique<LearnedCgroups>(options.container_grace,
                                                 kLearnedCgroupCapacity);
  std::string error;
  out.watcher = CgroupWatcher::Start(out.learned.get(), &error);
  if (out.watcher == nullptr) {
    Log().Write(
        LogLevel::kWarn,
        error + "; cgroups removed before their first event stay unresolved");
    out.learned.reset();
  }
  for (ProbeStatus& p : CgroupWatcher::Probes(out.watcher != nullptr, error)) {
    probes->push_back(std::move(p));
  }
  return out;
}

PipelineOptions PipelineOptionsFor(const Options& options, bool replay,
                                   MetadataResolver* metadata,
                                   const CgroupLearning& cgroups) {
  PipelineOptions p;
  p.paths = options.paths;
  p.use_sysfs = !replay;
  p.reconcile_interval = options.reconcile_interval;
  p.container_grace = options.container_grace;
  p.max_containers = options.max_containers;
  p.pid_comm_labels = options.pid_comm_labels;
  p.label_allowlist = options.label_allowlist;
  p.metadata = metadata;
  p.learned_cgroups = cgroups.learned.get();
  if (!replay) {
    p.queue_types = LoadKfdQueueTypes(options.paths, options.btf_path);
    p.queue_priority = LoadQueuePriorityFact(options.paths);
    Log().Write(LogLevel::kInfo, "queue priorities: " + p.queue_priority->why);
  }
  return p;
}

void PrintWarnings(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) Log().Write(LogLevel::kWarn, w);
}

SubmissionSinks PipelineSinks(Pipeline* pipeline,
                              std::vector<ProbeStatus> kernel_probes) {
  SubmissionSinks s;
  s.targets = [pipeline] { return pipeline->SampleTargets(); };
  s.find_doorbell = [pipeline](uint32_t tgid, uint64_t handle) {
    return pipeline->FindDoorbell(tgid, handle);
  };
  s.known_doorbells = [pipeline] { return pipeline->KnownDoorbells(); };
  s.handle = [pipeline](const Event& e) { pipeline->HandleRead(e); };
  s.doorbell_map_full = [pipeline](uint64_t n) {
    pipeline->SetDoorbellMapFull(n);
  };
  s.doorbell_probes = [pipeline, kernel = std::move(kernel_probes)](
                          const std::vector<ProbeStatus>& doorbell) {
    std::vector<ProbeStatus> all = kernel;
    all.insert(all.end(), doorbell.begin(), doorbell.end());
    pipeline->SetProbes(std::move(all));
  };
  return s;
}

SubmissionOptions SubmissionOptionsOf(const Options& options) {
  SubmissionOptions s;
  s.paths = options.paths;
  s.sample_interval = options.sample_interval;
  s.doorbells = options.doorbells;
  s.hsa_runtimes = options.hsa_runtimes;
  return s;
}

namespace {

std::unique_ptr<SubmissionReaders> StartSubmissionReaders(
    const Options& options, bool replay, Pipeline* pipeline,
    const std::vector<ProbeStatus>& kernel_probes) {
  if (replay) return nullptr;
  std::vector<std::string> warnings;
  auto readers = std::make_unique<SubmissionReaders>(
      SubmissionOptionsOf(options), PipelineSinks(pipeline, kernel_probes),
      &warnings);
  PrintWarnings(warnings);
  if (!readers->Active()) return nullptr;
  readers->Round();
  return readers;
}

}  // namespace

LiveSession StartLiveSession(const Options& options, SourceSetup setup,
                             const LiveSessionOptions& how) {
  LiveSession live;
  live.setup = std::move(setup);
  SourceSetup& s = live.setup;
  live.metadata = MakeMetadataResolver(options, s.replay);
  live.runtime_events = WatchRuntimeEvents(options, live.metadata.get());
  live.cgroups = StartCgroupLearning(options, s.replay, &s.probes);
  live.pipeline = std::make_unique<Pipeline>(
      PipelineOptionsFor(options, s.replay, live.metadata.get(), live.cgroups),
      std::move(s.source));
  live.pipeline->SetProbes(s.probes);
  if (how.before_start) how.before_start(live.pipeline.get());
  std::vector<std::string> warnings = live.pipeline->Start();
  if (how.start_warnings != nullptr) {
    *how.start_warnings = std::move(warnings);
  } else {
    PrintWarnings(warnings);
  }
  live.readers =
      StartSubmissionReaders(options, s.replay, live.pipeline.get(), s.probes);
  if (how.tick && live.readers != nullptr) {
    SubmissionReaders* readers = live.readers.get();
    live.ticker = std::make_unique<PeriodicThread>(
        readers->Period(), [readers] { readers->Round(); });
  }
  return live;
}

}  // namespace gpuq
