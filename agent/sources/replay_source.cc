#include "sources/replay_source.h"

namespace gpuq {

NextStatus ReplayEventSource::Next(Event* out,
                                   std::chrono::milliseconds /*timeout*/) {
  if (next_ >= capture_.events.size()) return NextStatus::kEof;
  *out = std::move(capture_.events[next_++]);
  return NextStatus::kOk;
}

}  // namespace gpuq
