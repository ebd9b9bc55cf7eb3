// The write-index rule behind gpuq_submissions_total: what a ROCr queue's
// amd_queue_t.write_dispatch_id, read again, says was submitted. One rule
// for the sampler's reads and a destroy's final index (Model) and the
// report's per-queue rows (report/run_analysis.cc).
#pragma once

#include <cstdint>

namespace gpuq {

/// Packets written since a queue's baseline, or a reset.
struct WriteIndexStep {
  uint64_t packets = 0;  ///< written since the baseline (0 on a reset)
  bool reset = false;    ///< went backwards: a new baseline, nothing counted
};

/// The baseline is the last index read (`sampled`), else, for a ROCr queue,
/// its index at create; any other queue (older captures, seeded queues)
/// starts counting at its first read. The index only grows while the queue
/// lives: going backwards means the memory now holds something else (a
/// missed destroy and a new queue), so counting starts over from `now`
/// rather than count garbage.
inline WriteIndexStep StepWriteIndex(bool sampled, bool rocr, uint64_t last,
                                     uint64_t at_create, uint64_t now) {
  const uint64_t base = sampled ? last : rocr ? at_create : now;
  if (now < base) return {0, true};
  return {now - base, false};
}

/// Whether a sample read at `sample_write_ptr` is of the live queue whose
/// write index is at `queue_write_ptr`. A queue destroyed after the read
/// may have left its queue_id to a new queue elsewhere, whose index the
/// read is not. 0 on either side (captures before the sample carried its
/// address; queues seeded from sysfs) cannot be told apart: accepted.
inline bool SampleReadsQueue(uint64_t sample_write_ptr,
                             uint64_t queue_write_ptr) {
  return sample_write_ptr == 0 || queue_write_ptr == 0 ||
         sample_write_ptr == queue_write_ptr;
}

}  // namespace gpuq
