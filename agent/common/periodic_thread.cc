#include "common/periodic_thread.h"

#include "common/worker_thread.h"

namespace gpuq {

PeriodicThread::PeriodicThread(std::chrono::milliseconds interval,
                               std::function<void()> tick)
    : interval_(interval), tick_(std::move(tick)) {
  thread_ = StartWorkerThread("periodic reader", [this] { Loop(); });
}

PeriodicThread::~PeriodicThread() { Stop(); }

void PeriodicThread::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PeriodicThread::Loop() {
  auto next = std::chrono::steady_clock::now() + interval_;
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_until(lock, next, [this] { return stop_; })) {
    lock.unlock();
    tick_();
    lock.lock();
    next += interval_;
    // After a stall (a suspended VM, a tick longer than the interval), skip
    // the missed ticks instead of running them back to back.
    const auto now = std::chrono::steady_clock::now();
    if (next < now) next = now + interval_;
  }
}

}  // namespace gpuq
