// DoorbellTally: the cumulative counters of one doorbell signal (rings,
// packets by class, kernel dispatches with the barrier bit), as the kernel
// map keeps them and a capture record carries them. The one place that
// compares, adds and subtracts them: the model's series, a recording's
// baseline and the poller's change check all go through it.
#pragma once

#include <gpuq/abi.h>

#include <array>
#include <cstddef>
#include <cstdint>

namespace gpuq {

struct DoorbellTally {
  uint64_t doorbells = 0;
  std::array<uint64_t, GPUQ_PACKET__MAX> by_packet{};  ///< gpuq_packet_class
  uint64_t barrier_dispatches = 0;  ///< kernel dispatches, barrier bit set

  static DoorbellTally Of(const gpuq_doorbell_count_record& r) {
    DoorbellTally t;
    t.doorbells = r.doorbells;
    for (size_t c = 0; c < GPUQ_PACKET__MAX; ++c)
      t.by_packet[c] = r.by_packet[c];
    t.barrier_dispatches = r.barrier_dispatches;
    return t;
  }

  void WriteTo(gpuq_doorbell_count_record* r) const {
    r->doorbells = doorbells;
    for (size_t c = 0; c < GPUQ_PACKET__MAX; ++c)
      r->by_packet[c] = by_packet[c];
    r->barrier_dispatches = barrier_dispatches;
  }

  /// Whether any counter is below `base`'s: cumulative counts of an
  /// in-kernel map entry only go backwards when the entry was deleted and
  /// created again, counting from zero.
  bool FellBelow(const DoorbellTally& base) const {
    bool below = doorbells < base.doorbells ||
                 barrier_dispatches < base.barrier_dispatches;
    for (size_t c = 0; c < GPUQ_PACKET__MAX; ++c) {
      below = below || by_packet[c] < base.by_packet[c];
    }
    return below;
  }

  DoorbellTally& operator+=(const DoorbellTally& o) {
    doorbells += o.doorbells;
    for (size_t c = 0; c < GPUQ_PACKET__MAX; ++c)
      by_packet[c] += o.by_packet[c];
    barrier_dispatches += o.barrier_dispatches;
    return *this;
  }

  /// Counters since `base` (callers check FellBelow first).
  DoorbellTally Since(const DoorbellTally& base) const {
    DoorbellTally d = *this;
    d.doorbells -= base.doorbells;
    for (size_t c = 0; c < GPUQ_PACKET__MAX; ++c)
      d.by_packet[c] -= base.by_packet[c];
    d.barrier_dispatches -= base.barrier_dispatches;
    return d;
  }

  bool operator==(const DoorbellTally& o) const {
    return doorbells == o.doorbells && by_packet == o.by_packet &&
           barrier_dispatches == o.barrier_dispatches;
  }
  bool operator!=(const DoorbellTally& o) const { return !(*this == o); }
};

}  // namespace gpuq
