#include "cli/commands.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <memory>
#include <set>
#include <thread>

#include "cli/submissions.h"
#include "export/collector.h"
#include "export/metrics_server.h"
#include "export/once_render.h"
#include "loader/bpf_loader.h"
#include "loader/kernel_features.h"
#include "model/pipeline.h"
#include "resolver/container_metadata.h"
#include "sampler/periodic_thread.h"
#include "sources/bpf_source.h"
#include "sources/capture.h"
#include "sources/kfd_sysfs.h"
#include "sources/replay_source.h"

namespace gpuq {
namespace {

constexpr const char* kNoPrivileges =
    "gpuq-agent needs root (or CAP_BPF with CAP_PERFMON, or CAP_SYS_ADMIN) to "
    "load its kernel probes; run it as root, or read a capture with --replay "
    "FILE";

void Warn(const std::string& message) {
  std::cout.flush();  // keep stdout and stderr in order on a terminal
  std::cerr << "gpuq-agent: " << message << "\n";
}

/// The event source and what keeps it alive.
struct SourceSetup {
  std::unique_ptr<BpfLoader> loader;  // must outlive the source
  std::unique_ptr<EventSource> source;
  std::vector<ProbeStatus> probes;
  bool replay = false;
  std::string error;  ///< set when no source could be made
};

SourceSetup MakeSource(const Options& options) {
  SourceSetup setup;
  if (!options.replay.empty()) {
    setup.replay = true;
    Capture capture;
    std::string error;
    const CaptureError result = ReadCapture(options.replay, &capture, &error);
    if (result != CaptureError::kNone &&
        !(result == CaptureError::kTruncated && options.allow_truncated)) {
      setup.error = error;
      return setup;
    }
    if (result == CaptureError::kTruncated) Warn(error);
    setup.source = std::make_unique<ReplayEventSource>(std::move(capture));
    return setup;
  }
  if (!HasBpfPrivileges()) {
    setup.error = kNoPrivileges;
    return setup;
  }
  BpfLoader::Options load_options{options.paths, options.allow_fentry};
  setup.loader = BpfLoader::Load(load_options, &setup.probes, &setup.error);
  if (setup.loader == nullptr) return setup;
  auto source = std::make_unique<BpfEventSource>(setup.loader->EventsFd(),
                                                 setup.loader->DropsFd());
  if (!source->Ok()) {
    setup.error = source->Error();
    return setup;
  }
  setup.source = std::move(source);
  return setup;
}

/// The container runtimes to ask for names: Docker Engine API sockets
/// (dockerd, podman), then OCI bundles (containerd, CRI-O). None in replay:
/// a capture carries the names it was recorded with.
std::unique_ptr<MetadataResolver> MakeMetadataResolver(const Options& options,
                                                       bool replay) {
  if (replay || !options.runtime_lookup) return nullptr;
  std::vector<std::string> sockets = options.docker_sockets;
  if (sockets.empty()) {
    sockets = {options.host_root + "/var/run/docker.sock",
               options.host_root + "/run/podman/podman.sock"};
  }
  std::vector<std::unique_ptr<RuntimeClient>> clients;
  for (const std::string& socket : sockets) {
    // A runtime this host does not run is not an error worth counting.
    if (access(socket.c_str(), F_OK) != 0) continue;
    clients.push_back(MakeDockerApiClient(socket, options.runtime_timeout));
  }
  clients.push_back(MakeOciBundleClient(
      options.run_dir.empty() ? options.host_root + "/run" : options.run_dir));
  return std::make_unique<MetadataResolver>(std::move(clients),
                                            MetadataResolver::Options{});
}

PipelineOptions PipelineOptionsFor(const Options& options, bool replay,
                                   MetadataResolver* metadata) {
  PipelineOptions p;
  p.paths = options.paths;
  p.use_sysfs = !replay;
  p.reconcile_interval = options.reconcile_interval;
  p.container_grace = options.container_grace;
  p.max_containers = options.max_containers;
  p.pid_comm_labels = options.pid_comm_labels;
  p.label_allowlist = options.label_allowlist;
  p.metadata = metadata;
  return p;
}

void PrintWarnings(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) Warn(w);
}

/// The submission readers of a live pipeline, after one first round (the
/// baseline of every queue seen without a create event). None in replay: a
/// capture carries the samples and counts it recorded.
std::unique_ptr<SubmissionReaders> StartSubmissionReaders(
    const Options& options, bool replay, Pipeline* pipeline,
    const std::vector<ProbeStatus>& kernel_probes) {
  if (replay) return nullptr;
  std::vector<std::string> warnings;
  auto readers = std::make_unique<SubmissionReaders>(
      options, PipelineSinks(pipeline, kernel_probes), &warnings);
  PrintWarnings(warnings);
  if (!readers->Active()) return nullptr;
  readers->Round();
  return readers;
}

/// Runs `readers` every period on a thread of its own (null: nothing).
std::unique_ptr<PeriodicThread> TickEveryPeriod(SubmissionReaders* readers) {
  if (readers == nullptr) return nullptr;
  return std::make_unique<PeriodicThread>(readers->Period(),
                                          [readers] { readers->Round(); });
}

// Written by the signal handler, so a thread can sleep until a stop without
// polling the flag (a pipe: write() is async-signal-safe).
int g_stop_pipe[2] = {-1, -1};

// The first SIGTERM/SIGINT asks every loop to stop (each waits at most
// ~50 ms, docs/shutdown.md); a second one ends the process at once with the
// default action (the kernel still releases every BPF link with its fd).
extern "C" void OnSignal(int signo) {
  if (StopRequested().exchange(true)) {
    signal(signo, SIG_DFL);
    raise(signo);
    return;
  }
  if (g_stop_pipe[1] >= 0) {
    const char byte = 1;
    [[maybe_unused]] const ssize_t n = write(g_stop_pipe[1], &byte, 1);
  }
}

// Sleeps until SIGTERM/SIGINT (or a 100 ms check of StopRequested() when the
// pipe could not be made).
void WaitForStop() {
  while (!StopRequested().load()) {
    pollfd pfd{g_stop_pipe[0], POLLIN, 0};
    if (g_stop_pipe[0] < 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    } else {
      poll(&pfd, 1, 1000);
    }
  }
}

}  // namespace

std::atomic<bool>& StopRequested() {
  static std::atomic<bool> stop{false};
  return stop;
}

void InstallSignalHandlers() {
  if (g_stop_pipe[0] < 0 && pipe2(g_stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    g_stop_pipe[0] = g_stop_pipe[1] = -1;
  }
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int RunOnce(const Options& options) {
  SourceSetup setup = MakeSource(options);
  if (setup.source == nullptr) {
    if (setup.replay || !KfdPresent(options.paths.Kfd())) {
      Warn(setup.error);
      if (!setup.replay) {
        Warn(
            "to see what the output looks like without amdkfd: gpuq-agent "
            "--once --replay examples/default.gpuqcap");
      }
      return 1;
    }
    // amdkfd is here but no hook is: its sysfs inventory still answers
    // "which queues exist where", without lifecycle counters.
    Warn(setup.error + "; showing the KFD sysfs inventory only");
  }
  const auto metadata = MakeMetadataResolver(options, setup.replay);
  Pipeline pipeline(PipelineOptionsFor(options, setup.replay, metadata.get()),
                    std::move(setup.source));
  pipeline.SetProbes(setup.probes);
  PrintWarnings(pipeline.Start());
  // Submissions over the window: a round at its start and one at its end.
  const auto readers =
      StartSubmissionReaders(options, setup.replay, &pipeline, setup.probes);
  std::atomic<bool>& stop = StopRequested();
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (!setup.replay)
    deadline = std::chrono::steady_clock::now() + options.interval;
  if (pipeline.Run(stop, deadline) == Pipeline::RunResult::kError) {
    Warn(pipeline.Error());
    return 1;
  }
  if (readers != nullptr) readers->Round();
  if (!setup.replay) pipeline.ReconcileNow();
  // The same snapshot -> families path as /metrics, plus the process list.
  const Snapshot snapshot = pipeline.TakeSnapshot();
  std::cout << RenderOnce(BuildFamilies(snapshot), options.output,
                          OnceProcesses(snapshot));
  return 0;
}

int RunDaemon(const Options& options) {
  // A bad web config stops the agent before anything is loaded.
  WebConfig web;
  if (!options.web_config_file.empty()) {
    std::string web_error;
    if (!LoadWebConfig(options.web_config_file, &web, &web_error)) {
      Warn(web_error);
      return 1;
    }
    if (web.basic_auth_users.empty() && !web.tls) {
      Warn("--web.config.file " + options.web_config_file +
           " has no basic_auth_users: /metrics is not protected");
    }
  }
  SourceSetup setup = MakeSource(options);
  if (setup.source == nullptr) {
    if (setup.replay) {
      Warn(setup.error);
      return 1;
    }
    // Degrade, never crash-loop: serve the sysfs inventory and self-metrics.
    Warn(setup.error +
         "; serving the KFD sysfs inventory and self-metrics "
         "only");
  }
  const auto metadata = MakeMetadataResolver(options, setup.replay);
  Pipeline pipeline(PipelineOptionsFor(options, setup.replay, metadata.get()),
                    std::move(setup.source));
  pipeline.SetProbes(setup.probes);
  PrintWarnings(pipeline.Start());
  const auto readers =
      StartSubmissionReaders(options, setup.replay, &pipeline, setup.probes);
  // Declared after the pipeline and the readers: stops first.
  const auto ticker = TickEveryPeriod(readers.get());

  std::string error;
  auto server = MetricsServer::Start(
      options.listen_address, web,
      std::make_shared<PipelineCollectable>(&pipeline), &error);
  if (server == nullptr) {
    Warn(error);
    return 1;
  }
  std::cerr << fmt::format("gpuq-agent: serving /metrics on port {} ({}{})\n",
                           server->Port(), web.tls ? "https, " : "",
                           options.listen_address);
  std::atomic<bool>& stop = StopRequested();
  const auto result = pipeline.Run(stop, std::nullopt);
  if (result == Pipeline::RunResult::kError) {
    Warn(pipeline.Error());
    return 1;
  }
  // A finished replay keeps serving its final state until stopped.
  WaitForStop();
  return 0;
}

int RunCheck(const Options& options) {
  std::vector<std::string> functions;
  for (const HookSpec& spec : Hooks()) functions.emplace_back(spec.function);
  const KernelFeatures f = ProbeKernel(options.paths, functions);
  std::cout << fmt::format(
      "kernel: vmlinux BTF {}, amdgpu loaded {}, amdgpu BTF {}, kprobes {}, "
      "KFD sysfs {}\n",
      f.vmlinux_btf ? "yes" : "no", f.amdgpu_loaded ? "yes" : "no",
      f.amdgpu_btf ? "yes" : "no", f.kprobes ? "yes" : "no",
      f.kfd_sysfs ? "yes" : "no");

  std::vector<ProbeStatus> status;
  std::string error;
  std::unique_ptr<BpfLoader> loader;
  const bool privileged = HasBpfPrivileges();
  if (privileged) {
    loader =
        BpfLoader::Load({options.paths, options.allow_fentry}, &status, &error);
  } else {
    for (const HookPlan& plan : PlanHooks(f, options.allow_fentry)) {
      status.push_back({plan.spec->probe, plan.spec->function,
                        HookModeName(plan.mode), false,
                        "not tried: " + std::string(kNoPrivileges)});
    }
  }
  std::cout << fmt::format("{:<14} {:<30} {:<7} {:<9} {}\n", "PROBE",
                           "FUNCTION", "MODE", "ATTACHED", "DETAIL");
  for (const ProbeStatus& s : status) {
    std::cout << fmt::format("{:<14} {:<30} {:<7} {:<9} {}\n", s.probe,
                             s.function, s.mode, s.attached ? "yes" : "no",
                             s.detail);
  }
  if (options.verify) {
    // fentry programs need their function's BTF: verify those this kernel
    // has (6.1 lacks mes_v12_0_remove_hw_queue). kprobe programs load
    // whether or not the function exists, so all of them are verified.
    const std::set<std::string>& present = f.btf_funcs;
    std::vector<std::string> absent;
    for (const HookSpec& spec : Hooks()) {
      if (present.count(spec.function) == 0) absent.push_back(spec.function);
    }
    if (absent.size() == Hooks().size()) {
      std::cout << "verifier, fentry programs: none verified (no hooked "
                   "function has BTF here)\n";
    } else {
      const std::string err =
          BpfLoader::VerifyPrograms(HookMode::kFentry, "", &present);
      std::cout << fmt::format("verifier, fentry programs: {}{}\n",
                               err.empty() ? "all accepted" : "refused: " + err,
                               absent.empty()
                                   ? ""
                                   : fmt::format(" (not in this kernel: {})",
                                                 fmt::join(absent, ", ")));
    }
    const std::string err = BpfLoader::VerifyPrograms(HookMode::kKprobe);
    std::cout << fmt::format("verifier, kprobe programs: {}\n",
                             err.empty() ? "all accepted" : "refused: " + err);
  }
  if (loader == nullptr) {
    Warn(privileged ? error : kNoPrivileges);
    return 1;
  }
  return 0;
}

int RunRecord(const Options& options) {
  SourceSetup setup = MakeSource(options);
  if (setup.source == nullptr) {
    Warn(setup.error);
    return 1;
  }
  std::string error;
  auto writer = CaptureWriter::Create(options.record_path, &error);
  if (writer == nullptr) {
    Warn(error);
    return 1;
  }
  const auto metadata = MakeMetadataResolver(options, setup.replay);
  Pipeline pipeline(PipelineOptionsFor(options, setup.replay, metadata.get()),
                    std::move(setup.source));
  pipeline.RecordTo(writer.get());
  pipeline.SetProbes(setup.probes);
  PrintWarnings(pipeline.Start());
  // Samples and doorbell counts go into the capture like kernel events.
  const auto readers =
      StartSubmissionReaders(options, setup.replay, &pipeline, setup.probes);
  auto ticker = TickEveryPeriod(readers.get());
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (options.duration) {
    deadline = std::chrono::steady_clock::now() + *options.duration;
  }
  const auto result = pipeline.Run(StopRequested(), deadline);
  if (ticker != nullptr) {
    // A last round, so the capture ends with the state at its end.
    ticker->Stop();
    readers->Round();
  }
  const uint64_t records = writer->Records();
  if (!writer->Close(&error)) {
    Warn(error);
    return 1;
  }
  if (result == Pipeline::RunResult::kError) {
    Warn(pipeline.Error());
    return 1;
  }
  std::cerr << fmt::format("gpuq-agent: wrote {} records to {}\n", records,
                           options.record_path);
  return 0;
}

int Main(int argc, char** argv) {
  Options options;
  if (auto exit_code = ParseOptions(argc, argv, &options)) return *exit_code;
  InstallSignalHandlers();
  switch (options.command) {
    case Command::kOnce:
      return RunOnce(options);
    case Command::kCheck:
      return RunCheck(options);
    case Command::kRecord:
      return RunRecord(options);
    case Command::kDaemon:
    case Command::kVersion:
      return RunDaemon(options);
  }
  return 2;
}

}  // namespace gpuq
