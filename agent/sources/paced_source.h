// Plays another source's events at the pace their timestamps (ts_ns) were
// recorded at, times `speed`: what `gpuq-agent top --replay` watches, so a
// 120 s capture takes 120 s (or 12 s at --speed 10).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>

#include "sources/event_source.h"

namespace gpuq {

/// Thread-safety: Next() from one consumer thread; NowNs() from any thread.
class PacedEventSource : public EventSource {
 public:
  /// `speed` 0: no pacing (as fast as the consumer takes events).
  PacedEventSource(std::unique_ptr<EventSource> inner, double speed);

  NextStatus Next(Event* out, std::chrono::milliseconds timeout) override;
  std::string Error() const override { return inner_->Error(); }
  std::string Name() const override { return inner_->Name(); }
  SourceDrops Drops() const override { return inner_->Drops(); }

  /// The capture's clock now: the first record's ts_ns plus the (scaled)
  /// wall time since it was delivered; never past the last delivered
  /// record once the capture has ended, or without pacing. 0 before the
  /// first record.
  uint64_t NowNs() const;
  /// Reads the first record ahead and returns its ts_ns (0: none, or
  /// unstamped): where the capture's clock starts. Before the first Next(),
  /// on the consumer's thread.
  uint64_t PeekFirstTimestamp();

 private:
  using Clock = std::chrono::steady_clock;
  /// When the record stamped `ts_ns` is due on the wall clock.
  Clock::time_point DueAt(uint64_t ts_ns) const;

  std::unique_ptr<EventSource> inner_;
  const double speed_;
  std::optional<Event> held_;  ///< read from inner_, not due yet
  std::atomic<bool> started_{false};
  Clock::time_point start_wall_{};  ///< set before started_ (release)
  uint64_t start_ts_ = 0;
  std::atomic<uint64_t> last_ts_{0};
  /// The inner source has ended and every record was delivered.
  std::atomic<bool> finished_{false};
};

}  // namespace gpuq
