// Container names and labels from the runtime that runs them: what a
// runtime says (ContainerMetadata), how it is asked (RuntimeClient; the
// clients are in docker_api_client.h and oci_bundle_client.h) and the cache
// in front of them. Lookups run on a worker thread with timeouts: a runtime
// that is absent, slow or broken never stalls the event path or /metrics.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "resolver/cgroup_path.h"

namespace gpuq {

/// What a runtime says about one container.
struct ContainerMetadata {
  std::string name;           ///< runtime name ("vllm"), "" if unknown
  std::string pod;            ///< Kubernetes pod name
  std::string ns;             ///< Kubernetes namespace
  std::string k8s_container;  ///< Kubernetes container name
  std::map<std::string, std::string> labels;  ///< runtime labels/annotations
  std::string source;  ///< "docker-api", "containerd-bundle", ...
};

/// One way to ask a runtime. Implementations must return within their
/// timeout. Thread-safety: Lookup() is called from one worker thread.
class RuntimeClient {
 public:
  virtual ~RuntimeClient() = default;
  /// Metadata of `id`, or nullopt. Sets *error (one line) on a failure that
  /// is not simply "this runtime does not know the container".
  virtual std::optional<ContainerMetadata> Lookup(const ContainerIdentity& id,
                                                  std::string* error) = 0;
  /// Stable name for the `runtime` label of gpuq_runtime_lookup_errors_total.
  virtual std::string Name() const = 0;
  /// Makes a Lookup() in progress (and every later one) return within
  /// ~50 ms instead of its whole timeout: the agent is shutting down. Called
  /// from another thread than Lookup().
  virtual void Cancel() {}
};

/// Asynchronous, cached metadata. Get() never blocks on a runtime.
/// Thread-safety: all public methods are thread-safe.
class MetadataResolver {
 public:
  struct Options {
    /// Failed or empty lookups are retried after this long.
    std::chrono::milliseconds retry_after{std::chrono::seconds(30)};
    /// Answers neither asked for (Get) nor announced for this long are
    /// forgotten: the agent's --container-grace, so a container's name stays
    /// while its series do (every scrape and event asks).
    std::chrono::milliseconds retention{std::chrono::minutes(5)};
    /// At most this many containers are remembered; beyond it the least
    /// recently asked are forgotten (Evicted()).
    size_t capacity = 16384;
    /// The clock of retry_after, retention and recency: the steady clock;
    /// tests step their own.
    std::function<std::chrono::steady_clock::time_point()> now = [] {
      return std::chrono::steady_clock::now();
    };
  };
  /// Clients are asked in order; the first answer wins.
  MetadataResolver(std::vector<std::unique_ptr<RuntimeClient>> clients,
                   Options options);
  ~MetadataResolver();
  MetadataResolver(const MetadataResolver&) = delete;
  MetadataResolver& operator=(const MetadataResolver&) = delete;

  /// The metadata known for `id` now; schedules a lookup if none was made
  /// (or the last one failed and retry_after passed). nullopt until known.
  std::optional<ContainerMetadata> Get(const ContainerIdentity& id);
  /// A runtime announced `container_id` (created or started): it is looked
  /// up now, ahead of other lookups, while the runtime still knows it. If
  /// the lookup finds nothing (the container is already removed), `said`
  /// (what the announcement carried) is kept instead.
  void Announce(const std::string& container_id,
                std::optional<ContainerMetadata> said);
  /// Lookup errors so far, by client Name() (and "docker-events" for the
  /// events streams' failed connections, CountError).
  std::map<std::string, uint64_t> Errors() const;
  /// Counts one error of `client` beside the lookups' own.
  void CountError(const std::string& client);
  /// Containers forgotten because `capacity` was reached.
  uint64_t Evicted() const;
  /// Containers remembered now (answers, pending and failed lookups).
  size_t Size() const;
  /// Blocks until no lookup is queued or running (tests).
  void WaitIdle();
  /// Forgets now what `retention` and `capacity` say to forget (the worker
  /// does it every second; tests call it after stepping their clock).
  void Trim();

 private:
  void Work();
  /// Forgets entries unused for `retention`, then the least recently used
  /// beyond `capacity`. Called with mu_ held.
  void TrimLocked(std::chrono::steady_clock::time_point now);

  struct Entry {
    std::optional<ContainerMetadata> metadata;
    std::optional<ContainerMetadata> said;  // from an announcement
    std::chrono::steady_clock::time_point next_try{};
    std::chrono::steady_clock::time_point last_used{};
    bool queued = false;
  };
  std::vector<std::unique_ptr<RuntimeClient>> clients_;
  Options options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable idle_cv_;
  std::unordered_map<std::string, Entry> cache_;  // by container id
  std::deque<ContainerIdentity> queue_;
  std::map<std::string, uint64_t> errors_;
  uint64_t evicted_ = 0;
  std::chrono::steady_clock::time_point next_trim_{};
  bool busy_ = false;
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace gpuq
