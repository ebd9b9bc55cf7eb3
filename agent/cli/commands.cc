#include "cli/commands.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <memory>
#include <set>
#include <thread>

#include "cli/probe_table.h"
#include "cli/report_command.h"
#include "cli/source_setup.h"
#include "common/log.h"
#include "common/worker_thread.h"
#include "export/collector.h"
#include "export/health.h"
#include "export/metrics_server.h"
#include "export/once_render.h"
#include "loader/bpf_loader.h"
#include "loader/kernel_features.h"
#include "model/pipeline.h"
#include "sources/kfd_sysfs.h"
#include "submissions/doorbell_counter.h"

namespace gpuq {
namespace {

// Written by the signal handler, so a thread can sleep until a stop without
// polling the flag (a pipe: write() is async-signal-safe).
int g_stop_pipe[2] = {-1, -1};

// SIGTERM/SIGINT ask every loop to stop (each waits at most ~50 ms,
// docs/shutdown.md). A second signal is record's business (it stops the
// command it runs at once, docs/record.md), so it is only noted here.
extern "C" void OnSignal(int signo) {
  StopSignal().store(signo);
  StopRequested().store(true);
  if (g_stop_pipe[1] >= 0) {
    const char byte = 1;
    [[maybe_unused]] const ssize_t n = write(g_stop_pipe[1], &byte, 1);
  }
}

// A worker thread's body threw (common/worker_thread.h): stop as on SIGTERM,
// so everything shuts down in order; main then exits non-zero.
void OnWorkerFailure() {
  StopRequested().store(true);
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

std::atomic<int>& StopSignal() {
  static std::atomic<int> signo{0};
  return signo;
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
  SetWorkerFailureHandler(OnWorkerFailure);
}

int RunOnce(const Options& options) {
  SourceSetup setup = MakeSource(options);
  if (setup.source == nullptr) {
    if (setup.replay || !KfdPresent(options.paths.Kfd())) {
      // One line: the error, and without amdkfd what to try instead.
      Log().Write(
          LogLevel::kError,
          setup.replay
              ? setup.error
              : setup.error +
                    "; to see what the output looks like without amdkfd: "
                    "gpuq-agent --once --replay examples/default.gpuqcap");
      return 1;
    }
    // amdkfd is here but no hook is: its sysfs inventory still answers
    // "which queues exist where", without lifecycle counters.
    Log().Write(LogLevel::kWarn,
                setup.error + "; showing the KFD sysfs inventory only");
  }
  if (!setup.tier_summary.empty())
    Log().Write(LogLevel::kInfo, setup.tier_summary);
  // Submissions over the window: a round at its start and one at its end.
  const LiveSession live = StartLiveSession(options, std::move(setup), {});
  Pipeline& pipeline = *live.pipeline;
  const bool replay = live.setup.replay;
  std::atomic<bool>& stop = StopRequested();
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (!replay) deadline = std::chrono::steady_clock::now() + options.interval;
  if (pipeline.Run(stop, deadline) == Pipeline::RunResult::kError) {
    Log().Write(LogLevel::kError, pipeline.Error());
    return 1;
  }
  if (live.readers != nullptr) live.readers->Round();
  if (!replay) pipeline.ReconcileNow();
  // The same snapshot /metrics renders.
  std::cout << RenderOnce(pipeline.TakeSnapshot(), options.output);
  return 0;
}

int RunDaemon(const Options& options) {
  // A bad web config stops the agent before anything is loaded.
  WebConfig web;
  if (!options.web_config_file.empty()) {
    std::string web_error;
    if (!LoadWebConfig(options.web_config_file, &web, &web_error)) {
      Log().Write(LogLevel::kError, web_error);
      return 1;
    }
    if (web.basic_auth_users.empty() && !web.tls) {
      Log().Write(LogLevel::kWarn,
                  "--web.config.file " + options.web_config_file +
                      " has no basic_auth_users: /metrics is not protected");
    }
  }
  SourceSetup setup = MakeSource(options);
  if (setup.source == nullptr) {
    if (setup.replay) {
      Log().Write(LogLevel::kError, setup.error);
      return 1;
    }
    // Degrade, never crash-loop: serve the sysfs inventory and self-metrics.
    Log().Write(LogLevel::kWarn,
                setup.error +
                    "; serving the KFD sysfs inventory and self-metrics "
                    "only");
  }
  if (!setup.tier_summary.empty())
    Log().Write(LogLevel::kInfo, setup.tier_summary);
  const bool replay = setup.replay;
  const bool bpf_source = !replay && setup.source != nullptr;
  LiveSessionOptions how;
  how.tick = true;
  const LiveSession live = StartLiveSession(options, std::move(setup), how);
  Pipeline& pipeline = *live.pipeline;

  // /healthz (docs/operations.md); declared before the server, which asks.
  std::atomic<bool> replay_finished{false};
  const std::string kfd = options.paths.Kfd();
  HealthCheck health = [&pipeline, &replay_finished, replay, bpf_source, kfd] {
    HealthFacts facts;
    facts.replay = replay;
    facts.bpf_source = bpf_source;
    facts.kfd_sysfs = !replay && KfdPresent(kfd);
    facts.kfd_sysfs_path = kfd;
    const Pipeline::Heartbeat beat = pipeline.LastHeartbeat();
    facts.loop_running = beat.running;
    if (beat.last_pass) {
      facts.since_last_pass =
          std::chrono::steady_clock::now() - *beat.last_pass;
    }
    facts.replay_finished = replay_finished.load();
    facts.stopping = StopRequested().load();
    return JudgeHealth(facts);
  };

  std::string error;
  // The recording API, when asked for; declared before the server, which
  // serves it (and stops first).
  std::unique_ptr<RecordingApi> recordings;
  if (!options.recording_dir.empty()) {
    recordings = RecordingApi::Create(
        {options.recording_dir, options.recording_max_bytes,
         options.recording_retention},
        &pipeline, &error);
    if (recordings == nullptr) {
      Log().Write(LogLevel::kError, error);
      return 1;
    }
  }
  auto server =
      MetricsServer::Start(options.listen_address, web,
                           std::make_shared<PipelineCollectable>(&pipeline),
                           &error, std::move(health), recordings.get());
  if (server == nullptr) {
    Log().Write(LogLevel::kError, error);
    return 1;
  }
  Log().WriteAlways(
      LogLevel::kInfo,
      fmt::format("serving /metrics on port {} ({}{})", server->Port(),
                  web.tls ? "https, " : "", options.listen_address));
  std::atomic<bool>& stop = StopRequested();
  const auto result = pipeline.Run(stop, std::nullopt);
  if (result == Pipeline::RunResult::kError) {
    Log().Write(LogLevel::kError, pipeline.Error());
    return 1;
  }
  // A finished replay keeps serving its final state until stopped.
  replay_finished.store(replay && result == Pipeline::RunResult::kEof);
  WaitForStop();
  return 0;
}

int RunCheck(const Options& options) {
  const KernelFeatures f = ProbeKernel(options.paths, HookFunctions());
  std::cout << fmt::format(
      "kernel: vmlinux BTF {}, amdgpu loaded {}, amdgpu BTF {}, kprobes {}, "
      "fentry {}, tracepoints {}, KFD sysfs {}\n",
      f.vmlinux_btf ? "yes" : "no", f.amdgpu_loaded ? "yes" : "no",
      f.amdgpu_btf ? "yes" : "no", f.kprobes ? "yes" : "no",
      f.fentry ? "yes" : "no", f.tracepoints ? "yes" : "no",
      f.kfd_sysfs ? "yes" : "no");
  std::cout << fmt::format(
      "  fentry: {}\n  kprobes: {}\n  tracepoints: {}\n  preemption: {}{}\n",
      f.fentry_note, f.kprobe_note, f.tracepoint_note, f.preempt_note,
      f.preempts_programs
          ? ": programs can be preempted, and a preempted program or bpf() "
            "map call makes the next task on its CPU skip gpuq's programs "
            "(counted: gpuq_events_dropped_total{reason=\"prog_skipped\"})"
          : "");

  std::vector<ProbeStatus> status;
  std::string error, summary;
  std::unique_ptr<BpfLoader> loader;
  const bool privileged = HasBpfPrivileges();
  const PlanOptions plan_options{options.allow_fentry, options.probe_tier};
  if (privileged) {
    loader = BpfLoader::Load({options.paths, options.allow_fentry,
                              options.probe_tier, options.btf_path, &f},
                             &status, &error, &summary);
  } else {
    const std::vector<HookPlan> plans = PlanHooks(f, plan_options);
    for (const HookPlan& plan : plans) {
      status.push_back({plan.spec->probe, plan.target,
                        HookModeName(plan.mode()), false,
                        "not tried: " + std::string(kNoPrivileges),
                        plan.spec->group, TierName(plan.tier)});
    }
    summary = TierSummary(plans);
  }
  std::cout << RenderProbeTable(status) << summary << "\n";
  if (options.verify) {
    // fentry programs need their function's BTF: verify those this kernel
    // has (6.1 lacks mes_v12_0_remove_hw_queue). kprobe programs load
    // whether or not the function exists, so all of them are verified.
    const std::set<std::string> present = BtfFuncNames(f);
    std::vector<std::string> absent;
    size_t functions_hooked = 0;  // the tracepoint tier hooks no function
    for (const HookSpec& spec : Hooks()) {
      // A core kernel function has BTF everywhere: it says nothing about
      // whether amdkfd's hooks can be verified here.
      if (IsTracepointHook(spec) || spec.core_kernel) continue;
      // An argument-only hook (context_create) has no fentry program.
      if (spec.fentry_entry == nullptr && spec.fentry_exit == nullptr) continue;
      ++functions_hooked;
      const std::string target = TargetOf(spec, present);
      if (present.count(target) == 0) absent.push_back(target);
    }
    if (absent.size() == functions_hooked) {
      std::cout << "verifier, fentry programs: none verified (no hooked "
                   "function has BTF here)\n";
    } else {
      const std::string err =
          BpfLoader::VerifyPrograms(ProbeTier::kBtfFentry, "", &f);
      std::cout << fmt::format("verifier, fentry programs: {}{}\n",
                               err.empty() ? "all accepted" : "refused: " + err,
                               absent.empty()
                                   ? ""
                                   : fmt::format(" (not in this kernel: {})",
                                                 fmt::join(absent, ", ")));
    }
    const std::string err = BpfLoader::VerifyPrograms(ProbeTier::kBtfKprobe);
    std::cout << fmt::format("verifier, kprobe programs: {}\n",
                             err.empty() ? "all accepted" : "refused: " + err);
    const std::string args_err =
        BpfLoader::VerifyPrograms(ProbeTier::kArgsKprobe);
    std::cout << fmt::format(
        "verifier, args-kprobe programs: {}\n",
        args_err.empty() ? "all accepted" : "refused: " + args_err);
    const std::string tp_err =
        f.tracepoints ? BpfLoader::VerifyPrograms(ProbeTier::kTracepoint)
                      : "not verified: " + f.tracepoint_note;
    std::cout << fmt::format(
        "verifier, tracepoint programs: {}\n",
        tp_err.empty() ? "all accepted" : "refused: " + tp_err);
    // --doorbells=uprobe's programs, loaded and attached to nothing: a
    // kernel's verifier can refuse what another accepts (a doorbell
    // program 6.18 accepted was refused by 6.1's, which loses an OR's
    // bounds).
    DoorbellCounter::Options doorbell_options;
    doorbell_options.scan_processes = false;
    std::string doorbell_err;
    const std::unique_ptr<DoorbellCounter> doorbells =
        DoorbellCounter::Open(doorbell_options, &doorbell_err);
    std::cout << fmt::format(
        "verifier, doorbell programs: {}\n",
        doorbells != nullptr ? "all accepted" : "refused: " + doorbell_err);
    // Which pair was loaded (bpf/doorbell.bpf.c: a preemptible uprobe
    // program on a 6.13+ private stack must hold preemption off).
    if (doorbells != nullptr) {
      std::cout << fmt::format(
          "  doorbell programs hold preemption off: {}\n",
          doorbells->HoldsPreemptionOff()
              ? "yes (the kernel has bpf_preempt_disable)"
              : "no (the kernel lacks bpf_preempt_disable, Linux 6.10, and "
                "private stacks)");
    }
  }
  if (loader == nullptr) {
    Log().Write(LogLevel::kError, privileged ? error : kNoPrivileges);
    return 1;
  }
  return 0;
}

int Main(int argc, char** argv) {
  Options options;
  if (auto exit_code = ParseOptions(argc, argv, &options)) return *exit_code;
  // Only now: a usage error above is still the plain "gpuq-agent: error:"
  // line (the flags that choose the format may be what is wrong).
  Log().SetLevel(options.log_level);
  Log().SetFormat(options.log_format);
  InstallSignalHandlers();
  switch (options.command) {
    case Command::kOnce:
      return RunOnce(options);
    case Command::kCheck:
      return RunCheck(options);
    case Command::kRecord:
      return RunRecord(options);
    case Command::kTop:
      return RunTop(options);
    case Command::kReport:
      return RunReportCommand(options);
    case Command::kDaemon:
    case Command::kVersion:
      return RunDaemon(options);
  }
  return 2;
}

}  // namespace gpuq
