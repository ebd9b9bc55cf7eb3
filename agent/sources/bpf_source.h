// Live events from the kernel side's `events` ring buffer.
#pragma once

#include <gpuq/abi.h>

#include <array>
#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "sources/event.h"
#include "sources/event_source.h"

struct ring_buffer;

namespace gpuq {

/// Decodes one record of the kernel side's ring buffer into `*out`. A record
/// that does not decode (a kernel/agent ABI mismatch) is said in a warn line
/// naming its status, type and size (the logger writes a repeated line once
/// per 10 s) and returns false; the caller counts it (decode_error).
bool DecodeKernelRecord(const void* data, size_t size, Event* out);

/// Thread-safety: Next() from one thread; Drops() from any thread.
class BpfEventSource : public EventSource {
 public:
  /// `events_fd`: the ring buffer map; `drops_fd`: the per-CPU drop counters
  /// (indexed by enum gpuq_drop_reason); `prog_fds`: the programs whose
  /// skipped runs Drops() counts, each under the kernel's name of it. Maps
  /// and programs must outlive the source.
  BpfEventSource(int events_fd, int drops_fd, std::vector<int> prog_fds = {});
  ~BpfEventSource() override;
  BpfEventSource(const BpfEventSource&) = delete;
  BpfEventSource& operator=(const BpfEventSource&) = delete;

  /// False (with Error()) if the ring buffer could not be set up.
  bool Ok() const { return rb_ != nullptr; }
  NextStatus Next(Event* out, std::chrono::milliseconds timeout) override;
  std::string Error() const override { return error_; }
  std::string Name() const override { return "bpf"; }
  SourceDrops Drops() const override;

 private:
  static int OnRecord(void* ctx, void* data, size_t size);

  ring_buffer* rb_ = nullptr;
  int drops_fd_;
  std::vector<int> prog_fds_;
  /// The kernel's name of each program (prog_fds_'s order), read once.
  std::vector<std::string> prog_names_;
  std::deque<Event> pending_;
  std::atomic<uint64_t> decode_errors_{0};
  /// The last sum read of each kernel drop counter: a failed read keeps it
  /// (a counter never goes back) and is logged.
  mutable std::array<std::atomic<uint64_t>, GPUQ_DROP__MAX> last_drops_{};
  /// The same for each program's skipped runs (prog_fds_'s order).
  std::unique_ptr<std::atomic<uint64_t>[]> last_prog_skipped_;
  std::string error_;
};

}  // namespace gpuq
