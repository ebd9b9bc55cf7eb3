// Submissions by sampling: reads every live ROCr queue's
// write_dispatch_id and read_dispatch_id out of its owner's memory and turns
// them into GPUQ_EV_QUEUE_SAMPLE records. The model counts the deltas
// (packets submitted, packets consumed) and write - read (pending packets).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_set>
#include <vector>

#include "common/host_paths.h"
#include "sources/event.h"
#include "submissions/process_memory.h"
#include "submissions/sample_target.h"

namespace gpuq {

/// What one Sample() round did.
struct SampleRoundStats {
  size_t queues = 0;
  size_t processes = 0;
  size_t unreadable = 0;  ///< samples flagged GPUQ_SAMPLE_F_UNREADABLE
  size_t denied = 0;      ///< of those, GPUQ_SAMPLE_F_DENIED too
};

/// Thread-safety: not thread-safe; one sampler thread calls Sample().
class QueueSampler {
 public:
  struct Options {
    HostPaths paths;
    MemoryAccess access = MemoryAccess::kAuto;
    /// CLOCK_MONOTONIC in ns (what the kernel side stamps); tests inject one.
    std::function<uint64_t()> clock;
  };
  using Sink = std::function<void(const Event&)>;

  explicit QueueSampler(Options options);

  /// A target whose read index follows its write index within this many
  /// bytes is read as one range (ROCr's amd_queue_t: 72 bytes apart), which
  /// halves what process_vm_readv walks and pins.
  static constexpr uint64_t kMaxSpan = 248;

  /// Reads every target (one batched read per owner process) and passes one
  /// GPUQ_EV_QUEUE_SAMPLE per target to `sink`: the owner's header, stamped
  /// when its process was read. A target that cannot be read (the process
  /// exited, the page is unmapped, no ptrace access) gets
  /// GPUQ_SAMPLE_F_UNREADABLE and zero indexes; that is never an error.
  /// The first time a process's queues read, its runtime knobs follow
  /// (one GPUQ_EV_PROCESS_KNOBS, from its environment).
  SampleRoundStats Sample(const std::vector<SampleTarget>& targets,
                          const Sink& sink);

  const MemoryReadStats& read_stats() const { return reader_.stats(); }
  MemoryAccess access() const { return reader_.access(); }

 private:
  /// The knobs of `owner`'s process, once: when its queues read this round
  /// (`read_any`) and its knobs were not read before.
  void EmitKnobs(const gpuq_event_header& owner, bool read_any, uint64_t now,
                 const Sink& sink);

  std::function<uint64_t()> clock_;
  ProcessMemoryReader reader_;
  std::string procfs_;
  /// Processes (process_key) whose knobs were read, of the last round.
  std::unordered_set<uint64_t> knobs_read_;
  std::unordered_set<uint64_t> knobs_read_now_;
  /// Where a target's two indexes are in one process's read.
  struct Slot {
    size_t write_range, write_offset;  // range index, byte offset in data_
    size_t read_range, read_offset;
  };
  // Reused across rounds: no allocation per round once warm.
  std::vector<size_t> order_;
  std::vector<MemoryRange> ranges_;
  std::vector<Slot> slots_;
  std::vector<uint8_t> data_;
  std::vector<uint8_t> ok_;
};

}  // namespace gpuq
