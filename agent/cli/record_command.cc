// `gpuq-agent record`: the live event stream (or a capture's, with --replay)
// into a capture file, optionally only one container's, optionally around a
// command whose exit ends the recording and whose status is returned.
// Semantics of signals, --duration and the command: docs/record.md.
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <optional>
#include <thread>

#include "cli/child_command.h"
#include "cli/commands.h"
#include "cli/event_loop_thread.h"
#include "cli/recording_warnings.h"
#include "cli/source_setup.h"
#include "common/log.h"
#include "sources/capture.h"

namespace gpuq {
namespace {

using Clock = std::chrono::steady_clock;

/// After the command was asked to stop (SIGTERM at --duration, a forwarded
/// signal), how long it may take before it is killed.
constexpr auto kCommandGrace = std::chrono::seconds(10);
/// How long the event loop keeps reading once the recording is to end:
/// what the kernel wrote just before (the command's last queue operations,
/// the teardown of its queues in a kworker) is still in the ring buffer.
constexpr auto kDrain = std::chrono::milliseconds(500);

/// "elapsed, events, queues now" on stderr once a second, on a terminal
/// only (a log file gets the final line alone).
class Progress {
 public:
  explicit Progress(Pipeline* pipeline)
      : pipeline_(pipeline), on_tty_(isatty(STDERR_FILENO) == 1) {}

  void Tick() {
    if (!on_tty_) return;
    const auto now = Clock::now();
    if (shown_ && now - last_ < std::chrono::seconds(1)) return;
    last_ = now;
    const Snapshot s = pipeline_->TakeSnapshot();
    uint64_t events = 0, queues = 0;
    for (uint64_t n : s.events_by_type) events += n;
    for (const auto& [key, series] : s.queue_series) queues += series.live;
    const auto elapsed =
        std::chrono::duration_cast<std::chrono::seconds>(now - start_).count();
    std::cerr << fmt::format(
        "\rgpuq-agent: recording {}s, {} events, {} queues now\x1b[K", elapsed,
        events, queues);
    shown_ = true;
  }
  /// Ends the progress line so later messages start on their own.
  void Done() {
    if (shown_) std::cerr << "\n";
    shown_ = false;
  }

 private:
  Pipeline* pipeline_;
  bool on_tty_;
  bool shown_ = false;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_{};
};

std::string Quoted(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
}

/// True when SIGINT most likely came from the terminal's Ctrl-C, which the
/// kernel delivers to the whole foreground process group: the command (in
/// the agent's group) already has it, and a second one would be a second
/// Ctrl-C to it.
bool InterruptFromTerminal() {
  const pid_t foreground = tcgetpgrp(STDIN_FILENO);
  return foreground != -1 && foreground == getpgrp();
}

}  // namespace

int RunRecord(const Options& options) {
  if (!options.record_from.empty()) return RunRecordFrom(options);
  SourceSetup setup = MakeSource(options);
  if (setup.source == nullptr) {
    Log().Write(LogLevel::kError, setup.error);
    return 1;
  }
  std::string error;
  auto writer = CaptureWriter::Create(options.record_path, &error, 0,
                                      options.record_compression);
  if (writer == nullptr) {
    Log().Write(LogLevel::kError, error);
    return 1;
  }
  LiveSessionOptions how;
  // Samples and doorbell counts go into the capture like kernel events.
  how.tick = true;
  // The capture starts with the state at its start: topology and the
  // queues KFD sysfs shows (live), before any event.
  how.before_start = [&](Pipeline* pipeline) {
    pipeline->RecordTo(writer.get());
    if (!options.record_container.empty()) {
      pipeline->RecordOnlyContainer(options.record_container);
    }
  };
  const LiveSession live = StartLiveSession(options, std::move(setup), how);
  Pipeline& pipeline = *live.pipeline;

  // The event loop on a thread of its own; this one watches the command,
  // --duration, signals and shows progress.
  EventLoopThread loop(&pipeline, "record event loop");

  const std::vector<std::string>& command = options.record_command;
  pid_t child = -1;
  int exit_status = 0;
  if (!command.empty()) {
    // Probes are attached and the start state is written: start it now.
    int err = 0;
    child = SpawnCommand(command, &err);
    if (child < 0) {
      Log().Write(LogLevel::kError, fmt::format("cannot run {}: {}", command[0],
                                                std::strerror(err)));
      exit_status = SpawnFailureStatus(err);
    }
  }
  std::optional<Clock::time_point> deadline;
  if (options.duration) deadline = Clock::now() + *options.duration;
  std::optional<Clock::time_point> kill_at;  // the command was asked to stop
  std::atomic<bool>& stop = StopRequested();
  Progress progress(&pipeline);
  const bool ran_command = !command.empty() && child > 0;
  Clock::time_point next_flush = Clock::now() + std::chrono::seconds(1);
  while (command.empty() || child > 0) {
    if (child > 0) {
      int status = 0;
      if (waitpid(child, &status, WNOHANG) == child) {
        exit_status = ShellExitStatus(status);
        child = -1;
        break;  // the command's teardown is in: recording ends
      }
    }
    const bool deadline_hit = deadline && Clock::now() >= *deadline;
    if (child <= 0) {
      // Without a command: a signal, --duration or the end of a replayed
      // capture ends the recording.
      if (stop.load() || deadline_hit || loop.Done()) break;
    } else if (!kill_at && (stop.load() || deadline_hit)) {
      // Keep recording while the command stops, so its queues' teardown is
      // in the capture: ask it once, then kill it after a grace period.
      const int signo = deadline_hit ? SIGTERM : StopSignal().load();
      if (!(signo == SIGINT && InterruptFromTerminal())) kill(child, signo);
      kill_at = Clock::now() + kCommandGrace;
      stop.store(false);  // a second signal kills it at once
    } else if (kill_at && (stop.load() || Clock::now() >= *kill_at)) {
      kill(child, SIGKILL);
      kill_at = Clock::time_point::max();
      stop.store(false);
    }
    if (loop.Failed()) {
      // The source failed: record no further, but the command still owns
      // the terminal and its status is what the caller waits for.
      if (!kill_at) {
        kill(child, SIGTERM);
        kill_at = Clock::now() + kCommandGrace;
      }
    }
    progress.Tick();
    if (Clock::now() >= next_flush) {
      // At most a second of records is held back from the file.
      pipeline.FlushRecording();
      next_flush = Clock::now() + std::chrono::seconds(1);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (live.setup.replay) {
    // A capture is re-recorded whole (it ends on its own, quickly), also
    // when the command was quicker.
    while (!loop.Done()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  } else if (!loop.Done()) {
    std::this_thread::sleep_for(kDrain);
  }
  const bool failed = loop.Stop();
  progress.Done();
  if (live.ticker != nullptr) {
    // A last round, so the capture ends with the state at its end.
    live.ticker->Stop();
    live.readers->Round();
  }
  // The records a --container filter still held waiting for a name (after
  // the lookups in flight), then names that arrived after a container's
  // last event.
  pipeline.FinishRecording();
  pipeline.RecordLateMetadata();
  const Snapshot at_end = pipeline.RecordSourceDrops();
  const uint64_t records = writer->Records();
  if (!writer->Close(&error)) {
    Log().Write(LogLevel::kError, error);
    return command.empty() ? 1 : exit_status;
  }
  if (failed) Log().Write(LogLevel::kError, pipeline.Error());
  Log().WriteAlways(LogLevel::kInfo, fmt::format("wrote {} records to {}",
                                                 records, options.record_path));
  RecordingEnd end{at_end, writer->Skipped(), options.record_container, 0};
  if (!end.container.empty()) {
    end.container_records = pipeline.RecordedContainerRecords();
  }
  for (const std::string& warning : RecordingWarnings(end)) {
    Log().Write(LogLevel::kWarn, warning);
  }
  if (ran_command) {
    Log().WriteAlways(
        LogLevel::kInfo,
        fmt::format("{} exited with status {}", Quoted(command), exit_status));
  }
  if (!command.empty()) return exit_status;
  return failed ? 1 : 0;
}

}  // namespace gpuq
