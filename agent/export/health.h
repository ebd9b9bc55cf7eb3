// What /healthz answers (docs/operations.md): whether the agent's event
// source is running, decided from what the daemon knows about its source
// and its event loop.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace gpuq {

/// One answer of /healthz: 200 "ok", or 503 with `reason` (one line).
struct HealthStatus {
  bool ok = false;
  std::string reason;
};

/// Asked on every /healthz request, from civetweb's threads.
using HealthCheck = std::function<HealthStatus()>;

/// The event loop (Pipeline::Run) silent this long is stuck: it goes round
/// at least every 50 ms, and a pass that applies events, drains the source
/// or reconciles against sysfs takes well under a second.
inline constexpr std::chrono::seconds kEventLoopStalledAfter{10};

/// What the daemon knows when /healthz is asked.
struct HealthFacts {
  /// The capture was read and validated (the daemon serves nothing before),
  /// so the source is there; false: live.
  bool replay = false;
  /// Live: an eBPF source is attached (at least one kernel hook).
  bool bpf_source = false;
  /// Live: amdkfd's sysfs (<sysfs>/class/kfd/kfd) is there now; without an
  /// eBPF source it is the model's only source (the inventory).
  bool kfd_sysfs = false;
  std::string kfd_sysfs_path;  ///< where it was looked for
  /// The event loop is in Pipeline::Run now.
  bool loop_running = false;
  /// Time since the loop last went round; nullopt: it never did.
  std::optional<std::chrono::steady_clock::duration> since_last_pass;
  /// The replay's loop returned at the end of the capture: the final state
  /// is served until the agent is stopped.
  bool replay_finished = false;
  /// SIGTERM, SIGINT, or a worker thread that failed: the agent is going.
  bool stopping = false;
};

/// The answer for `facts`, checked in this order: stopping; the replay's
/// loop at its end (ok); the loop not started, ended, or silent for
/// kEventLoopStalledAfter; live without an eBPF source nor amdkfd's sysfs.
HealthStatus JudgeHealth(const HealthFacts& facts);

}  // namespace gpuq
