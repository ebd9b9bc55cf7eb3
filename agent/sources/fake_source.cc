#include "sources/fake_source.h"

namespace gpuq {

NextStatus FakeEventSource::Next(Event* out,
                                 std::chrono::milliseconds /*timeout*/) {
  if (next_ >= events_.size()) return NextStatus::kEof;
  *out = events_[next_++];
  return NextStatus::kOk;
}

}  // namespace gpuq
