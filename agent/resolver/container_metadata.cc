// The asynchronous cache of container metadata in front of the runtime
// clients (docker_api_client.cc, oci_bundle_client.cc): one worker thread
// asks them, so a slow runtime never stalls a caller.
#include "resolver/container_metadata.h"

#include <algorithm>
#include <exception>
#include <functional>
#include <utility>

#include "common/log.h"
#include "common/worker_thread.h"
#include "resolver/runtime_json.h"

namespace gpuq {
namespace {

struct Outcome {
  std::optional<ContainerMetadata> metadata;
  // Each client asked: its Name() and its error ("" when it answered or
  // did not know the container).
  std::vector<std::pair<std::string, std::string>> asked;
};

// Asks the clients in order until one answers. `stopping` is checked before
// each client so a destructor waits for at most the client already running.
Outcome AskClients(const std::vector<std::unique_ptr<RuntimeClient>>& clients,
                   const ContainerIdentity& id,
                   const std::function<bool()>& stopping) {
  Outcome out;
  for (const auto& client : clients) {
    if (stopping()) break;
    std::string error;
    std::optional<ContainerMetadata> meta;
    try {
      meta = client->Lookup(id, &error);
    } catch (const std::exception& e) {  // a client bug must not end the
      error = e.what();                  // worker thread (std::terminate)
    } catch (...) {
      error = "unknown exception";
    }
    out.asked.emplace_back(client->Name(), error);
    if (meta) {
      out.metadata = std::move(meta);
      break;
    }
  }
  return out;
}

}  // namespace

MetadataResolver::MetadataResolver(
    std::vector<std::unique_ptr<RuntimeClient>> clients, Options options)
    : clients_(std::move(clients)), options_(options) {
  worker_ = StartWorkerThread("container metadata", [this] { Work(); });
}

MetadataResolver::~MetadataResolver() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  // A lookup in progress returns within ~50 ms instead of its timeout.
  for (const auto& client : clients_) client->Cancel();
  cv_.notify_all();
  idle_cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

std::optional<ContainerMetadata> MetadataResolver::Get(
    const ContainerIdentity& id) {
  if (!id.InContainer()) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = options_.now();
  Entry& entry = cache_[id.container_id];
  entry.last_used = now;
  if (entry.metadata) return entry.metadata;
  if (!entry.queued && !stop_ && now >= entry.next_try) {
    entry.queued = true;
    queue_.push_back(id);
    cv_.notify_one();
  }
  return std::nullopt;
}

void MetadataResolver::Announce(const std::string& container_id,
                                std::optional<ContainerMetadata> said) {
  if (container_id.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  Entry& entry = cache_[container_id];
  entry.last_used = options_.now();
  if (said && runtime_json::HasIdentity(*said)) entry.said = std::move(said);
  if (entry.metadata || entry.queued || stop_) return;
  // Ahead of the queue: this container may live for a second only. A
  // lookup that failed before (asked before the runtime knew it) is retried.
  entry.queued = true;
  ContainerIdentity id;
  id.container_id = container_id;
  queue_.push_front(std::move(id));
  cv_.notify_one();
}

std::map<std::string, uint64_t> MetadataResolver::Errors() const {
  std::lock_guard<std::mutex> lock(mu_);
  return errors_;
}

void MetadataResolver::CountError(const std::string& client) {
  std::lock_guard<std::mutex> lock(mu_);
  ++errors_[client];
}

uint64_t MetadataResolver::Evicted() const {
  std::lock_guard<std::mutex> lock(mu_);
  return evicted_;
}

size_t MetadataResolver::Size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.size();
}

void MetadataResolver::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_cv_.wait(lock, [this] { return stop_ || (queue_.empty() && !busy_); });
}

void MetadataResolver::Trim() {
  std::lock_guard<std::mutex> lock(mu_);
  TrimLocked(options_.now());
}

void MetadataResolver::TrimLocked(std::chrono::steady_clock::time_point now) {
  std::vector<std::pair<std::chrono::steady_clock::time_point, std::string>>
      idle;
  for (auto it = cache_.begin(); it != cache_.end();) {
    if (it->second.queued) {
      ++it;  // the worker will write into it
    } else if (now - it->second.last_used >= options_.retention) {
      it = cache_.erase(it);
    } else {
      if (cache_.size() > options_.capacity) {
        idle.emplace_back(it->second.last_used, it->first);
      }
      ++it;
    }
  }
  if (cache_.size() <= options_.capacity) return;
  std::sort(idle.begin(), idle.end());
  for (const auto& [used, id] : idle) {
    if (cache_.size() <= options_.capacity) break;
    cache_.erase(id);
    ++evicted_;
  }
}

void MetadataResolver::Work() {
  constexpr auto kTrimEvery = std::chrono::seconds(1);
  const auto stopping = [this] {
    std::lock_guard<std::mutex> lock(mu_);
    return stop_;
  };
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait_for(lock, kTrimEvery, [this] { return stop_ || !queue_.empty(); });
    if (stop_) break;
    const auto now = options_.now();
    if (now >= next_trim_ || cache_.size() > options_.capacity) {
      TrimLocked(now);
      next_trim_ = now + kTrimEvery;
    }
    if (queue_.empty()) continue;
    const ContainerIdentity id = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();  // clients may block for their whole timeout
    Outcome outcome = AskClients(clients_, id, stopping);
    // Written once per different error (and again after the client
    // answers), outside the lock: a stderr that blocks must not hold up
    // the lookups of the threads that label series.
    for (const auto& [name, error] : outcome.asked)
      Log().WriteOnChange(LogLevel::kWarn, "runtime " + name, error);
    lock.lock();
    for (const auto& [name, error] : outcome.asked) {
      if (!error.empty()) ++errors_[name];  // counted every time
    }
    Entry& entry = cache_[id.container_id];
    entry.queued = false;
    if (!outcome.metadata && entry.said) {
      // Gone before it could be asked: what its announcement said stands.
      outcome.metadata = entry.said;
    }
    if (outcome.metadata) {
      entry.metadata = std::move(outcome.metadata);  // pinned from now on
      entry.said.reset();
    } else {
      entry.next_try = options_.now() + options_.retry_after;
    }
    busy_ = false;
    if (queue_.empty()) idle_cv_.notify_all();
  }
  busy_ = false;
  idle_cv_.notify_all();
}

}  // namespace gpuq
