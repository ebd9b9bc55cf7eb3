// A thread that calls a function every interval until stopped: the sampler
// and doorbell rounds of the daemon and of `record`.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace gpuq {

/// Thread-safety: Stop() and the destructor from the owning thread.
class PeriodicThread {
 public:
  /// Starts the thread; `tick` runs first after one interval, then every
  /// interval (measured from the start of the previous tick, so a slow tick
  /// does not stretch the period; ticks never overlap). interval > 0.
  PeriodicThread(std::chrono::milliseconds interval,
                 std::function<void()> tick);
  ~PeriodicThread();
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  /// Wakes the thread and joins it; a tick in progress finishes first.
  void Stop();

 private:
  void Loop();

  const std::chrono::milliseconds interval_;
  std::function<void()> tick_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace gpuq
