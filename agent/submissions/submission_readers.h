// The two submission paths as the commands run them: write-index
// sampling (--sample-interval) and doorbell uprobes (--doorbells=uprobe).
// One Round() reads both and feeds what it read through the pipeline, which
// turns it into metrics and, when recording, into the capture.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/host_paths.h"
#include "loader/probe_status.h"
#include "sources/event.h"
#include "submissions/queue_sampler.h"
#include "submissions/sample_target.h"

namespace gpuq {

class DoorbellPoller;

enum class DoorbellMode { kOff, kUprobe };

/// What the submission readers are asked for (the CLI's
/// --sample-interval, --doorbells and --hsa-runtime).
struct SubmissionOptions {
  HostPaths paths;
  std::chrono::milliseconds sample_interval{1000};  ///< 0: no sampling
  DoorbellMode doorbells = DoorbellMode::kOff;
  std::vector<std::string> hsa_runtimes;
};

/// What a round needs from the pipeline (Pipeline's methods; tests and the
/// benchmark pass their own).
struct SubmissionSinks {
  std::function<std::vector<SampleTarget>()> targets;
  std::function<std::optional<DoorbellOwner>(uint32_t, uint64_t)> find_doorbell;
  std::function<std::vector<std::pair<uint32_t, uint64_t>>()> known_doorbells;
  std::function<void(const Event&)> handle;
  /// Replaces the doorbell probes' rows of gpuq_probe_attached.
  std::function<void(const std::vector<ProbeStatus>&)> doorbell_probes;
  /// Doorbells the poller's full kernel maps lost (monotonic total).
  std::function<void(uint64_t)> doorbell_map_full;
};

/// Thread-safety: Round() from one thread at a time.
class SubmissionReaders {
 public:
  /// Rounds between two Rescan()s of the doorbell poller (new processes'
  /// maps); a process that creates its first queue is read in the next
  /// round (ScanQueueOwners), so its library is attached within one.
  static constexpr int kRescanEvery = 5;

  /// Sets up what `options` asks for (nothing with --sample-interval 0 and
  /// --doorbells=off: then Active() is false). A doorbell poller that
  /// cannot open is a warning in *warnings, and its probes are reported as
  /// not attached; sampling goes on without it.
  SubmissionReaders(const SubmissionOptions& options, SubmissionSinks sinks,
                    std::vector<std::string>* warnings);
  ~SubmissionReaders();
  SubmissionReaders(const SubmissionReaders&) = delete;
  SubmissionReaders& operator=(const SubmissionReaders&) = delete;

  bool Active() const { return sampler_ != nullptr || doorbells_asked_; }
  /// How often Round() should run: --sample-interval, or 1 s when only
  /// doorbells are polled.
  std::chrono::milliseconds Period() const { return period_; }

  /// One sampling round and one doorbell poll.
  void Round();

 private:
  SubmissionSinks sinks_;
  std::chrono::milliseconds period_;
  std::unique_ptr<QueueSampler> sampler_;
  bool doorbells_asked_ = false;
  std::unique_ptr<DoorbellPoller> poller_;
  int rounds_ = 0;
};

}  // namespace gpuq
