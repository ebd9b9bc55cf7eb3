// The seam between where events come from and the model that consumes them.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "sources/event.h"

namespace gpuq {

enum class NextStatus {
  kOk,       ///< *out holds an event
  kTimeout,  ///< nothing arrived within the timeout (live sources only)
  kEof,      ///< the source is exhausted (replay, fake)
  kError,    ///< unrecoverable; Error() says why
};

/// One kernel program's skipped runs (its bpf_prog_info.recursion_misses).
struct ProgramSkips {
  std::string program;  ///< the kernel's name of it (bpf_prog_info.name)
  uint64_t skipped = 0;
};

/// Losses the source itself observed, by reason, monotonic.
struct SourceDrops {
  uint64_t ringbuf_full = 0;  ///< kernel could not reserve ring space
  uint64_t map_full = 0;      ///< kernel live-queue map was full
  uint64_t decode_error = 0;  ///< records the agent could not decode
  /// Runs of the kernel side's programs the kernel skipped: a program runs
  /// at most once per CPU at a time, and a task preempted inside it (7.x
  /// tracepoints; trampolines on preemptible kernels) makes the next task
  /// on that CPU miss it (bpf_prog_info.recursion_misses).
  uint64_t prog_skipped = 0;
  /// prog_skipped program by program (their sum), live sources only: a
  /// capture keeps the sum.
  std::vector<ProgramSkips> prog_skipped_by_program;
  /// Tracepoint tier: KFD creates/destroys whose sys_exit program the kernel
  /// skipped (a subset of prog_skipped that lost a record for certain).
  uint64_t kfd_exit_skipped = 0;
  /// Tracepoint tier: KFD creates/destroys whose args could not be read
  /// from user memory (not made up as queue 0 of GPU 0).
  uint64_t args_unreadable = 0;
};

/// Where events come from: the live ring buffer, a capture file, or a test
/// vector. One consumer thread calls Next(); Drops() may be called from
/// another thread.
class EventSource {
 public:
  virtual ~EventSource() = default;
  /// Waits up to `timeout` for the next event.
  virtual NextStatus Next(Event* out, std::chrono::milliseconds timeout) = 0;
  /// Why the last Next() returned kError.
  virtual std::string Error() const = 0;
  /// "bpf", "replay" or "fake": the `source` label of gpuq_agent_info.
  virtual std::string Name() const = 0;
  virtual SourceDrops Drops() const { return {}; }
};

}  // namespace gpuq
