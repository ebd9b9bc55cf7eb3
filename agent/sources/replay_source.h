// Replays a capture file's events through the pipeline, as fast as they can
// be consumed.
#pragma once

#include <cstdint>
#include <memory>

#include "sources/capture.h"
#include "sources/capture_stream.h"
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

/// The same from a capture read as it is replayed: its first `records`
/// (what ScanCapture() found complete before any error), so memory holds one
/// read buffer, not the capture. Thread-safety: one consumer thread.
class StreamReplaySource : public EventSource {
 public:
  StreamReplaySource(std::unique_ptr<CaptureStream> stream, uint64_t records)
      : stream_(std::move(stream)), records_(records) {}

  NextStatus Next(Event* out, std::chrono::milliseconds timeout) override;
  std::string Error() const override { return error_; }
  std::string Name() const override { return "replay"; }

 private:
  std::unique_ptr<CaptureStream> stream_;
  uint64_t records_;
  std::string error_;
};

}  // namespace gpuq
