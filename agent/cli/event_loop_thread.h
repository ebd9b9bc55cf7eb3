// Pipeline::Run on a thread of its own, for the commands whose own thread
// watches something else meanwhile: record (its command, --duration,
// signals, progress) and top (the keyboard and the screen).
#pragma once

#include <atomic>
#include <thread>

#include "model/pipeline.h"

namespace gpuq {

/// Thread-safety: every method from the thread that made it.
class EventLoopThread {
 public:
  /// Starts `pipeline`'s event loop; `name` names the thread in an internal
  /// error ("record event loop"). `pipeline` must outlive this.
  EventLoopThread(Pipeline* pipeline, const char* name);
  /// Stop()s the loop if the owner has not.
  ~EventLoopThread();
  EventLoopThread(const EventLoopThread&) = delete;
  EventLoopThread& operator=(const EventLoopThread&) = delete;

  /// The loop has ended on its own: its source ended (a replay) or failed.
  bool Done() const { return done_.load(); }
  /// Once Done(): whether the loop ended in an error (Pipeline::Error()
  /// says which), a failed source or a worker that threw.
  bool Failed() const { return Done() && failed_.load(); }
  /// Asks the loop to stop, waits for it, and returns Failed().
  bool Stop();

 private:
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  std::atomic<bool> failed_{false};
  std::thread thread_;
};

}  // namespace gpuq
