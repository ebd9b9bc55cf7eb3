// `gpuq-agent record --from URL`: a recording made by a running agent
// through its recording API (docs/recording-api.md), started, waited for
// (--duration, or until Ctrl-C), stopped and downloaded to -o, so a capture
// of a DaemonSet pod's node needs only a port-forward.
#include <curl/curl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cli/commands.h"
#include "cli/recording_warnings.h"
#include "common/log.h"

namespace gpuq {
namespace {

using Json = nlohmann::json;

/// A request of the API that takes longer than this failed (a download is
/// bounded by --recording.max-bytes, not by time).
constexpr long kRequestTimeoutMs = 30000;

size_t AppendBody(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

size_t WriteFile(char* data, size_t size, size_t n, void* file) {
  return std::fwrite(data, size, n, static_cast<std::FILE*>(file));
}

struct Reply {
  long status = 0;
  std::string body;
};

class ApiClient {
 public:
  explicit ApiClient(std::string base) : base_(std::move(base)) {
    while (!base_.empty() && base_.back() == '/') base_.pop_back();
  }

  /// `method` on `path` (under the agent's address); false with *error (one
  /// line) when no HTTP response came.
  bool Call(const char* method, const std::string& path, Reply* reply,
            std::string* error, std::FILE* sink = nullptr) const {
    std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(),
                                                             curl_easy_cleanup);
    if (!curl) {
      *error = "curl_easy_init failed";
      return false;
    }
    CURL* c = curl.get();
    const std::string url = base_ + path;
    char errbuf[CURL_ERROR_SIZE] = {};
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    if (std::string(method) == "POST") {
      curl_easy_setopt(c, CURLOPT_POST, 1L);
      curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, 0L);
      curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
    }
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, kRequestTimeoutMs);
    if (sink == nullptr)
      curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, kRequestTimeoutMs);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "gpuq-agent/" GPUQ_VERSION);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    // Credentials in the address (USER:PASSWORD@) go as basic auth.
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    std::string body;
    // The body goes to `sink` only for a 200 (an error's JSON is read).
    struct Target {
      CURL* curl;
      std::string* body;
      std::FILE* sink;
    } target{c, &body, sink};
    curl_easy_setopt(
        c, CURLOPT_WRITEFUNCTION,
        +[](char* data, size_t size, size_t n, void* t) -> size_t {
          auto* to = static_cast<Target*>(t);
          long status = 0;
          curl_easy_getinfo(to->curl, CURLINFO_RESPONSE_CODE, &status);
          if (to->sink != nullptr && status == 200) {
            return WriteFile(data, size, n, to->sink);
          }
          return AppendBody(data, size, n, to->body);
        });
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &target);
    const CURLcode rc = curl_easy_perform(c);
    if (rc != CURLE_OK) {
      *error = fmt::format("{} {}: {}", method, Redacted(url),
                           errbuf[0] != '\0' ? errbuf : curl_easy_strerror(rc));
      return false;
    }
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &reply->status);
    reply->body = std::move(body);
    return true;
  }

  /// The address without its credentials, for messages.
  std::string Redacted(const std::string& url) const {
    const size_t scheme = url.find("://");
    const size_t at = url.find('@');
    const size_t slash = url.find('/', scheme + 3);
    if (scheme == std::string::npos || at == std::string::npos ||
        (slash != std::string::npos && at > slash)) {
      return url;
    }
    return url.substr(0, scheme + 3) + url.substr(at + 1);
  }

  std::string Where() const { return Redacted(base_); }

 private:
  std::string base_;
};

// The API's error line, or the HTTP status when the body has none.
std::string Problem(const Reply& reply) {
  const Json j = Json::parse(reply.body, nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_string()) {
    return fmt::format("{} ({})", j["error"].get<std::string>(), reply.status);
  }
  if (reply.status == 401) return "wrong or missing credentials (401)";
  if (reply.status == 404) {
    return "no recording API there (404): is the agent run with "
           "--recording.dir?";
  }
  return fmt::format("HTTP {}", reply.status);
}

std::string Escape(const std::string& text) {
  std::unique_ptr<char, decltype(&curl_free)> out(
      curl_easy_escape(nullptr, text.c_str(), static_cast<int>(text.size())),
      curl_free);
  return out != nullptr ? out.get() : "";
}

}  // namespace

int RunRecordFrom(const Options& options) {
  const ApiClient api(options.record_from);
  const std::string collection = "/api/v1/recordings";
  std::string query;
  auto add = [&query](const std::string& name, const std::string& value) {
    query += (query.empty() ? "?" : "&") + name + "=" + Escape(value);
  };
  if (!options.record_container.empty()) {
    add("container", options.record_container);
  }
  if (options.duration) {
    add("duration", fmt::format("{:.3f}", options.duration->count() / 1e3));
  }
  Reply reply;
  std::string error;
  if (!api.Call("POST", collection + query, &reply, &error)) {
    Log().Write(LogLevel::kError, "cannot start a recording: " + error);
    return 1;
  }
  if (reply.status != 201) {
    Log().Write(LogLevel::kError,
                fmt::format("{} did not start a recording: {}", api.Where(),
                            Problem(reply)));
    return 1;
  }
  const Json started = Json::parse(reply.body, nullptr, false);
  if (!started.is_object() || !started.contains("id") ||
      !started["id"].is_string()) {
    Log().Write(LogLevel::kError,
                fmt::format("{} answered no recording id", api.Where()));
    return 1;
  }
  const std::string id = started["id"].get<std::string>();
  const std::string one = collection + "/" + id;
  Log().WriteAlways(LogLevel::kInfo,
                    fmt::format("recording {} on {}{}", id, api.Where(),
                                options.duration ? "" : " until Ctrl-C"));

  // Until the agent ends it (--duration, its size limit) or a signal.
  std::atomic<bool>& stop = StopRequested();
  Json state;
  auto next_poll = std::chrono::steady_clock::now();
  while (!stop.load()) {
    if (std::chrono::steady_clock::now() >= next_poll) {
      next_poll += std::chrono::seconds(1);
      if (api.Call("GET", one, &reply, &error) && reply.status == 200) {
        state = Json::parse(reply.body, nullptr, false);
        if (state.is_object() && state.value("state", "") != "recording") break;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!api.Call("POST", one + "/stop", &reply, &error) || reply.status != 200) {
    Log().Write(LogLevel::kError,
                fmt::format("cannot stop recording {}: {}", id,
                            error.empty() ? Problem(reply) : error));
    return 1;
  }
  state = Json::parse(reply.body, nullptr, false);

  // Into a file beside -o, renamed when whole: -o never holds half a capture.
  const std::string partial = options.record_path + ".part";
  std::unique_ptr<std::FILE, decltype(&std::fclose)> file(
      std::fopen(partial.c_str(), "wbe"), std::fclose);
  if (file == nullptr) {
    Log().Write(LogLevel::kError, fmt::format("cannot create {}: {}", partial,
                                              std::strerror(errno)));
    return 1;
  }
  const bool got =
      api.Call("GET", one + "/capture", &reply, &error, file.get());
  const bool written = std::fflush(file.get()) == 0 && !std::ferror(file.get());
  file.reset();
  if (!got || reply.status != 200 || !written) {
    std::remove(partial.c_str());
    Log().Write(
        LogLevel::kError,
        fmt::format("cannot download recording {}: {}", id,
                    !got       ? error
                    : !written ? std::string("writing ") + partial + " failed"
                               : Problem(reply)));
    return 1;
  }
  if (std::rename(partial.c_str(), options.record_path.c_str()) != 0) {
    Log().Write(LogLevel::kError,
                fmt::format("cannot rename {} to {}: {}", partial,
                            options.record_path, std::strerror(errno)));
    std::remove(partial.c_str());
    return 1;
  }
  const std::string end_state =
      state.is_object() ? state.value("state", "") : "";
  const std::string reason = state.is_object() ? state.value("reason", "") : "";
  Log().WriteAlways(
      LogLevel::kInfo,
      fmt::format("wrote {} records to {} (recording {}: {}{})",
                  state.is_object() ? state.value("records", uint64_t{0}) : 0,
                  options.record_path, id, end_state,
                  reason.empty() ? "" : ", " + reason));
  if (!options.record_container.empty() && state.is_object()) {
    // The same warning as a local record's: the agent's drops are in the
    // capture itself, so only the container's check applies here.
    const Snapshot none;
    const RecordingEnd end{none, 0, options.record_container,
                           state.value("container_records", uint64_t{0})};
    for (const std::string& warning : RecordingWarnings(end)) {
      Log().Write(LogLevel::kWarn, warning);
    }
  }
  if (end_state == "failed") return 1;
  return 0;
}

}  // namespace gpuq
