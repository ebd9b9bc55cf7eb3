// `gpuq-agent top`: the live (or replayed) pipeline on a full screen. The
// rows come from agent/top/top_model.h, the drawing from top_screen.h; this
// file runs the pipeline and the refresh loop (docs/top.md).
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "cli/commands.h"
#include "cli/event_loop_thread.h"
#include "cli/source_setup.h"
#include "common/clock.h"
#include "common/log.h"
#include "sources/kfd_sysfs.h"
#include "sources/paced_source.h"
#include "top/top_model.h"
#include "top/top_screen.h"

namespace gpuq {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

int RunTop(const Options& options) {
  // Before anything is loaded: without a terminal there is nothing to show.
  if (isatty(STDOUT_FILENO) != 1 || isatty(STDIN_FILENO) != 1) {
    Log().Write(LogLevel::kError,
                "top needs a terminal; use --once for a snapshot");
    return 1;
  }
  if (options.interval < std::chrono::milliseconds(100)) {
    Log().Write(LogLevel::kError, "--interval of top must be at least 100ms");
    return 2;
  }
  SourceSetup setup = MakeSource(options);
  std::string status;
  if (setup.source == nullptr) {
    if (setup.replay || !KfdPresent(options.paths.Kfd())) {
      // One line: the error, and without amdkfd what to try instead.
      Log().Write(LogLevel::kError,
                  setup.replay
                      ? setup.error
                      : setup.error +
                            "; to see what top looks like without amdkfd: "
                            "gpuq-agent top --replay examples/default.gpuqcap");
      return 1;
    }
    status = setup.error + "; showing the KFD sysfs inventory only";
  }
  // A capture plays at its recorded pace (times --speed): rates are per
  // second of the capture's clock.
  PacedEventSource* paced = nullptr;
  uint64_t start_ns = 0;
  if (setup.replay) {
    auto source = std::make_unique<PacedEventSource>(std::move(setup.source),
                                                     options.replay_speed);
    paced = source.get();
    start_ns = paced->PeekFirstTimestamp();
    setup.source = std::move(source);
  }
  auto now_ns = [paced] {
    return paced != nullptr ? paced->NowNs() : MonotonicNowNs();
  };
  TopView view;
  if (setup.replay)
    view.replay = ReplayClock{setup.capture_span, options.replay_speed};
  std::vector<std::string> warnings;
  LiveSessionOptions how;
  how.tick = true;
  how.start_warnings = &warnings;
  const LiveSession live = StartLiveSession(options, std::move(setup), how);
  Pipeline& pipeline = *live.pipeline;
  if (!warnings.empty() && status.empty()) status = warnings.front();

  TopModel model;
  // The baseline of the first rates: the start (a replay: its first
  // record's time, before any record is applied).
  if (paced == nullptr || start_ns != 0) {
    model.Update(pipeline.TakeSnapshot(),
                 paced != nullptr ? start_ns : now_ns());
  }

  std::string error;
  auto screen = TopScreen::Open(&error);
  if (screen == nullptr) {
    Log().Write(LogLevel::kError, error);
    return 1;
  }
  // top draws on the terminal stderr shares: while it does, only errors
  // interrupt it (what was said before it opened stays on the terminal).
  const LogLevel level = Log().level();
  Log().SetLevel(LogLevel::kError);
  EventLoopThread loop(&pipeline, "top event loop");

  TopSort sort = TopSort::kQueues;
  auto next_update = Clock::now() + options.interval;
  bool finished = false;  // the source ended (replay) or failed
  bool redraw = true;
  bool help = false;  // `?`: the keys instead of the rows
  // `p`: the rows stay as they were while `model` keeps being updated, so
  // resuming shows current rates at once, not ones averaged over the pause.
  bool paused = false;
  TopModel frozen;
  std::atomic<bool>& stop = StopRequested();
  while (!stop.load()) {
    if (redraw && help) {
      const std::vector<std::string> lines = RenderTopHelp(screen->Width());
      screen->Draw(lines, lines.size());  // no column header to mark
      redraw = false;
    } else if (redraw) {
      view.status = status;
      view.paused = paused;
      size_t header_line = 0;
      screen->Draw(RenderTop(paused ? frozen : model, sort, screen->Width(),
                             view, &header_line),
                   header_line);
      redraw = false;
    }
    const int key = screen->ReadKey(100);
    if (key == 'q' || key == 'Q') break;
    if (key == '?' || (key == TopScreen::EscapeKey() && help)) {
      help = key == '?' && !help;
      redraw = true;
    } else if (key == 'p' || key == ' ') {
      paused = !paused;
      if (paused) frozen = model;
      redraw = true;
    } else if (key == 's') {
      sort = NextTopSort(sort);
      redraw = true;
    } else if (key >= '1' && key < '1' + kTopSortCount) {
      sort = static_cast<TopSort>(key - '1');
      redraw = true;
    } else if (key == TopScreen::ResizeKey()) {
      redraw = true;
    }
    const bool just_finished = !finished && loop.Done();
    if (just_finished || Clock::now() >= next_update) {
      // The end of a replay is shown at once, not an interval later.
      if (just_finished) {
        finished = true;
        status = loop.Failed()
                     ? "source failed: " + pipeline.Error()
                     : "replay finished: showing the final state; q quits";
      }
      model.Update(pipeline.TakeSnapshot(), now_ns());
      next_update = Clock::now() + options.interval;
      redraw = true;
    }
  }
  screen.reset();
  Log().SetLevel(level);
  if (loop.Stop()) {
    Log().Write(LogLevel::kError, pipeline.Error());
    return 1;
  }
  return 0;
}

}  // namespace gpuq
