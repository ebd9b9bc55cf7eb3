// The Docker Engine API events stream over a unix socket, with libcurl's
// multi interface so the destructor can wake a connection that is waiting
// for the next event (curl_multi_wakeup) instead of waiting out a timeout.
#include "resolver/runtime_events.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <utility>

#include "common/log.h"
#include "common/worker_thread.h"
#include "resolver/docker_api_client.h"

namespace gpuq {
namespace {

// The `runtime` label of gpuq_runtime_lookup_errors_total for failed
// connections of the events streams.
constexpr char kEventsClient[] = "docker-events";
// Only what names a container; `podman run` sends create, init, start.
// filters={"type":["container"],"event":["create","start"]}, URL-encoded.
constexpr char kEventsUrl[] =
    "http://localhost/v1.41/events?filters="
    "%7B%22type%22%3A%5B%22container%22%5D%2C%22event%22%3A%5B%22create%22%2C"
    "%22start%22%5D%7D";

// A single event is a few hundred bytes to a few KiB (labels); a line longer
// than this is not an event, and is dropped rather than kept growing.
constexpr size_t kMaxLineBytes = 1 << 20;

}  // namespace

DockerEventsWatcher::DockerEventsWatcher(
    std::string socket_path, MetadataResolver* resolver,
    std::chrono::milliseconds reconnect_after)
    : socket_path_(std::move(socket_path)),
      resolver_(resolver),
      reconnect_after_(reconnect_after) {
  // Refcounted and never undone here: the API clients share libcurl's
  // global state (thread-safe since 7.84; Debian 12 has 7.88).
  curl_global_init(CURL_GLOBAL_DEFAULT);
  worker_ = StartWorkerThread("runtime events", [this] { Work(); });
}

DockerEventsWatcher::~DockerEventsWatcher() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    if (multi_ != nullptr) curl_multi_wakeup(static_cast<CURLM*>(multi_));
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void DockerEventsWatcher::Work() {
  while (true) {
    Follow();
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_for(lock, reconnect_after_, [this] { return stop_; })) break;
  }
}

size_t DockerEventsWatcher::OnData(char* data, size_t size, size_t count,
                                   void* self_ptr) {
  auto* self = static_cast<DockerEventsWatcher*>(self_ptr);
  const size_t bytes = size * count;
  self->pending_.append(data, bytes);
  size_t start = 0;
  for (size_t nl; (nl = self->pending_.find('\n', start)) != std::string::npos;
       start = nl + 1) {
    self->OnLine(self->pending_.substr(start, nl - start));
  }
  self->pending_.erase(0, start);
  if (self->pending_.size() > kMaxLineBytes) {
    self->pending_.clear();
    self->Garbled(fmt::format("a line of more than {} bytes", kMaxLineBytes));
  }
  return bytes;
}

void DockerEventsWatcher::OnLine(const std::string& line) {
  std::string id, action;
  ContainerMetadata said;
  if (!ParseDockerEvent(line, &id, &action, &said)) {
    // The stream is filtered to container events: JSON that is not one we
    // use is the runtime's business; a line that is no JSON at all is not.
    if (!nlohmann::json::accept(line)) {
      Garbled(fmt::format("a line that is not JSON ({} bytes)", line.size()));
    }
    return;
  }
  // The stream works: a failure logged before is over.
  Log().WriteOnChange(LogLevel::kWarn, "events " + socket_path_, "");
  if (action != "create" && action != "start") return;
  resolver_->Announce(id, std::move(said));
  announced_.fetch_add(1);
}

void DockerEventsWatcher::Garbled(const std::string& why) {
  garbled_.fetch_add(1);
  resolver_->CountError(kEventsClient);
  Log().Write(LogLevel::kWarn, fmt::format("runtime events on {}: {}, skipped",
                                           socket_path_, why));
}

void DockerEventsWatcher::Failed(const std::string& why) {
  failures_.fetch_add(1);
  resolver_->CountError(kEventsClient);
  // One line while the same failure lasts (a runtime that is down fails
  // every reconnect); the next stream that delivers an event clears it.
  Log().WriteOnChange(
      LogLevel::kWarn, "events " + socket_path_,
      fmt::format("runtime events on {}: {}; names are looked up at first "
                  "sight instead, reconnecting",
                  socket_path_, why));
}

void DockerEventsWatcher::Follow() {
  CURL* easy = curl_easy_init();
  CURLM* multi = curl_multi_init();
  if (easy == nullptr || multi == nullptr) {
    if (easy != nullptr) curl_easy_cleanup(easy);
    if (multi != nullptr) curl_multi_cleanup(multi);
    Failed("cannot set up a libcurl handle");
    return;
  }
  pending_.clear();
  curl_easy_setopt(easy, CURLOPT_UNIX_SOCKET_PATH, socket_path_.c_str());
  curl_easy_setopt(easy, CURLOPT_URL, kEventsUrl);
  curl_easy_setopt(easy, CURLOPT_PROXY, "");
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, 2000L);
  curl_easy_setopt(easy, CURLOPT_USERAGENT, "gpuq-agent/" GPUQ_VERSION);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &DockerEventsWatcher::OnData);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, this);
  curl_easy_setopt(easy, CURLOPT_FAILONERROR, 1L);
  curl_multi_add_handle(multi, easy);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stop_) multi_ = multi;
  }
  std::string failed;  // why the connection ended in an error
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) break;
    }
    int running = 0;
    if (const CURLMcode m = curl_multi_perform(multi, &running);
        m != CURLM_OK) {
      failed = curl_multi_strerror(m);
      break;
    }
    if (running == 0) {
      int left = 0;
      while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
        if (msg->msg == CURLMSG_DONE && msg->data.result != CURLE_OK) {
          failed = curl_easy_strerror(msg->data.result);
        }
      }
      break;  // the runtime closed the stream (restart, shutdown)
    }
    // Wakes on data, on curl_multi_wakeup from the destructor, or after 1 s.
    if (const CURLMcode m = curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
        m != CURLM_OK) {
      failed = curl_multi_strerror(m);
      break;
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    multi_ = nullptr;
  }
  if (!failed.empty()) Failed(failed);
  curl_multi_remove_handle(multi, easy);
  curl_easy_cleanup(easy);
  curl_multi_cleanup(multi);
}

}  // namespace gpuq
