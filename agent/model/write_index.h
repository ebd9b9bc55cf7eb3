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

/// What the sampler read, and of which queue the model holds it to be.
struct SampleRead {
  uint64_t write_ptr = 0;      ///< the user VA it read
  uint64_t read_begin_ns = 0;  ///< when the read began (0: not recorded)
};
struct SampledQueue {
  uint64_t write_ptr = 0;   ///< where the queue's write index lives
  uint64_t created_ns = 0;  ///< its create record's stamp
};

/// Whether a read is of the live queue it is applied to. The record is
/// applied once every kernel record stamped before the read ended is in, so
/// a queue destroyed during the read is gone by then, and a queue of the
/// same queue_id made since (ROCr reuses the freed amd_queue_t, KFD the
/// lowest free id) would take the read:
///  - read at another address: the queue destroyed since, not this one;
///  - this queue's create stamped after the read began: the read may have
///    found its predecessor's final index there (a preempted sampler thread
///    makes that window milliseconds long), which that queue's destroy
///    already counted: counted here it is counted twice (45 for 34 in CI).
/// 0 on either side (captures before the sample carried these; queues
/// seeded from sysfs) cannot be told apart: accepted.
inline bool SampleReadsQueue(const SampleRead& read,
                             const SampledQueue& queue) {
  if (read.write_ptr != 0 && queue.write_ptr != 0 &&
      read.write_ptr != queue.write_ptr) {
    return false;
  }
  return read.read_begin_ns == 0 || queue.created_ns < read.read_begin_ns;
}

}  // namespace gpuq
