#include "sources/replay_source.h"

namespace gpuq {

NextStatus ReplayEventSource::Next(Event* out,
                                   std::chrono::milliseconds /*timeout*/) {
  if (next_ >= capture_.events.size()) return NextStatus::kEof;
  *out = std::move(capture_.events[next_++]);
  return NextStatus::kOk;
}

NextStatus StreamReplaySource::Next(Event* out,
                                    std::chrono::milliseconds /*timeout*/) {
  if (stream_->Records() >= records_) return NextStatus::kEof;
  if (stream_->Next(out)) return NextStatus::kOk;
  // Changed on disk since it was scanned.
  error_ = stream_->Message().empty() ? "the capture ended early"
                                      : stream_->Message();
  return NextStatus::kError;
}

}  // namespace gpuq
