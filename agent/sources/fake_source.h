// A test double for the live ring buffer: hands out a fixed list of events.
// Stands for BpfSource in unit tests; the host BPF tier covers the real one.
#pragma once

#include <vector>

#include "sources/event_source.h"

namespace gpuq {

/// Thread-safety: one consumer thread.
class FakeEventSource : public EventSource {
 public:
  explicit FakeEventSource(std::vector<Event> events,
                           SourceDrops drops = SourceDrops{})
      : events_(std::move(events)), drops_(drops) {}

  NextStatus Next(Event* out, std::chrono::milliseconds timeout) override;
  std::string Error() const override { return ""; }
  std::string Name() const override { return "fake"; }
  SourceDrops Drops() const override { return drops_; }

 private:
  std::vector<Event> events_;  // left intact; next_ walks it
  size_t next_ = 0;
  SourceDrops drops_;
};

}  // namespace gpuq
