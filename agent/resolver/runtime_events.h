// Learns container names when containers start, not only when the agent
// first needs them: follows the Docker Engine API events stream (dockerd, and
// podman's compat API under `podman system service`) and announces every
// container created or started to the MetadataResolver, which asks the
// runtime right away, while the container exists. A container that runs for
// a second and is removed (`--rm`, Kubernetes Jobs) keeps its name.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "resolver/container_metadata.h"

namespace gpuq {

/// One events stream on one socket, on a thread of its own, reconnecting
/// after `reconnect_after` when the runtime goes away. Never blocks its
/// owner: the destructor wakes the thread and joins it.
class DockerEventsWatcher {
 public:
  DockerEventsWatcher(
      std::string socket_path, MetadataResolver* resolver,
      std::chrono::milliseconds reconnect_after = std::chrono::seconds(5));
  ~DockerEventsWatcher();
  DockerEventsWatcher(const DockerEventsWatcher&) = delete;
  DockerEventsWatcher& operator=(const DockerEventsWatcher&) = delete;

  /// Containers announced so far (create and start events).
  uint64_t Announced() const { return announced_.load(); }
  /// Connections that ended in an error (the runtime is down, not a Docker
  /// API, ...). Reconnects follow.
  uint64_t Failures() const { return failures_.load(); }
  /// Lines of the stream that were no JSON (or longer than any event):
  /// skipped, counted with the failed connections' runtime label and said.
  uint64_t Garbled() const { return garbled_.load(); }

 private:
  void Work();
  /// One connection, until it ends or the watcher stops.
  void Follow();
  static size_t OnData(char* data, size_t size, size_t count, void* self);
  void OnLine(const std::string& line);
  /// A connection ended in an error: counted, logged once while it lasts.
  void Failed(const std::string& why);
  /// A line that is no event: counted, logged (rate-limited).
  void Garbled(const std::string& why);

  std::string socket_path_;
  MetadataResolver* resolver_;
  std::chrono::milliseconds reconnect_after_;
  std::string pending_;  // a line not yet complete (worker thread only)
  std::atomic<uint64_t> announced_{0};
  std::atomic<uint64_t> failures_{0};
  std::atomic<uint64_t> garbled_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  void* multi_ = nullptr;  // CURLM*, for curl_multi_wakeup from ~
  std::thread worker_;
};

}  // namespace gpuq
