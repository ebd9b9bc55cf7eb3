// Replays a capture file's events through the pipeline, as fast as they can
// be consumed.
#pragma once

#include "sources/capture.h"
#include "sources/event_source.h"

namespace gpuq {

/// Thread-safety: one consumer thread.
class ReplayEventSource : public EventSource {
 public:
  explicit ReplayEventSource(Capture capture) : capture_(std::move(capture)) {}

  NextStatus Next(Event* out, std::chrono::milliseconds timeout) override;
  std::string Error() const override { return ""; }
  std::string Name() const override { return "replay"; }

 private:
  Capture capture_;
  size_t next_ = 0;
};

}  // namespace gpuq
