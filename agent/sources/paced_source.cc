#include "sources/paced_source.h"

#include <algorithm>
#include <thread>

namespace gpuq {

PacedEventSource::PacedEventSource(std::unique_ptr<EventSource> inner,
                                   double speed)
    : inner_(std::move(inner)), speed_(speed) {}

PacedEventSource::Clock::time_point PacedEventSource::DueAt(
    uint64_t ts_ns) const {
  const double offset_ns =
      static_cast<double>(ts_ns - start_ts_) / std::max(speed_, 1e-9);
  return start_wall_ + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double, std::nano>(offset_ns));
}

NextStatus PacedEventSource::Next(Event* out,
                                  std::chrono::milliseconds timeout) {
  if (!held_) {
    Event event;
    const NextStatus status = inner_->Next(&event, timeout);
    if (status == NextStatus::kEof) finished_.store(true);
    if (status != NextStatus::kOk) return status;
    held_ = std::move(event);
  }
  // Records stamped 0 or earlier than the last one (agent-written records
  // of another clock) are due at once, at the last record's time.
  const uint64_t last = last_ts_.load();
  const uint64_t ts = std::max<uint64_t>(Header(*held_).ts_ns, last);
  if (!started_.load() && ts != 0) {  // the capture's clock starts
    start_ts_ = ts;
    start_wall_ = Clock::now();
    started_.store(true);
  }
  if (speed_ > 0 && started_.load()) {
    const auto due = DueAt(ts);
    const auto now = Clock::now();
    if (due > now) {
      std::this_thread::sleep_for(
          std::min<Clock::duration>(due - now, timeout));
      if (Clock::now() < due) return NextStatus::kTimeout;
    }
  }
  last_ts_.store(ts);
  *out = std::move(*held_);
  held_.reset();
  return NextStatus::kOk;
}

uint64_t PacedEventSource::PeekFirstTimestamp() {
  if (!held_) {
    Event event;
    if (inner_->Next(&event, std::chrono::milliseconds(0)) != NextStatus::kOk) {
      return 0;  // Next() asks again and reports the end or the error
    }
    held_ = std::move(event);
  }
  return Header(*held_).ts_ns;
}

uint64_t PacedEventSource::NowNs() const {
  if (!started_.load()) return 0;
  const uint64_t last = last_ts_.load();
  if (speed_ <= 0 || finished_.load()) return last;
  const double elapsed_ns =
      std::chrono::duration<double, std::nano>(Clock::now() - start_wall_)
          .count() *
      speed_;
  // Between records the capture's clock runs on; it never runs behind the
  // last delivered record.
  return std::max(last, start_ts_ + static_cast<uint64_t>(elapsed_ns));
}

}  // namespace gpuq
