#include "export/recording_api.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <system_error>

#include "common/log.h"
#include "common/periodic_thread.h"

namespace gpuq {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using SystemClock = std::chrono::system_clock;

constexpr const char* kPrefix = "/api/v1/recordings";
constexpr const char* kSuffix = ".gpuqcap";
/// The longest --duration a recording may ask for (a week).
constexpr double kMaxDurationSeconds = 7 * 24 * 3600;
/// A capture smaller than this cannot hold a start state worth reading.
constexpr uint64_t kMinMaxBytes = 4096;

std::string Rfc3339(SystemClock::time_point t) {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                     std::chrono::floor<std::chrono::seconds>(t));
}

ApiResponse Error(int status, const std::string& message,
                  const std::string& extra_headers = "") {
  ApiResponse r;
  r.status = status;
  r.body = Json{{"error", message}}.dump() + "\n";
  r.extra_headers = extra_headers;
  return r;
}

// What a download or a delete of a recording still being written gets.
ApiResponse StillRunning(const std::string& id) {
  return Error(409, fmt::format("recording {} is still running: stop it "
                                "first (POST {}/{}/stop)",
                                id, kPrefix, id));
}

ApiResponse Ok(int status, const Json& body) {
  ApiResponse r;
  r.status = status;
  r.body = body.dump(2) + "\n";
  return r;
}

// An id names a file in the directory: letters, digits and '-' only.
bool ValidId(const std::string& id) {
  return !id.empty() && id.size() <= 64 &&
         std::all_of(id.begin(), id.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '-';
         });
}

std::optional<uint64_t> ParseCount(const std::string& text) {
  uint64_t n = 0;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return n;
}

uint64_t FileBytes(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

}  // namespace

std::unique_ptr<RecordingApi> RecordingApi::Create(
    const RecordingLimits& limits, Pipeline* pipeline, std::string* error) {
  std::unique_ptr<RecordingApi> api(new RecordingApi(limits, pipeline));
  if (!api->ScanDirectory(error)) return nullptr;
  {
    std::lock_guard<std::mutex> lock(api->mu_);
    api->PruneLocked();
  }
  RecordingApi* self = api.get();
  api->ticker_ = std::make_unique<PeriodicThread>(std::chrono::seconds(1),
                                                  [self] { self->Tick(); });
  return api;
}

RecordingApi::RecordingApi(RecordingLimits limits, Pipeline* pipeline)
    : limits_(std::move(limits)), pipeline_(pipeline) {}

RecordingApi::~RecordingApi() {
  if (ticker_ != nullptr) ticker_->Stop();
  std::lock_guard<std::mutex> lock(mu_);
  if (writer_ != nullptr) EndLocked("agent stopped");
}

bool RecordingApi::ScanDirectory(std::string* error) {
  std::error_code ec;
  // Made for captures alone: they name containers, pods and processes.
  if (fs::create_directories(limits_.dir, ec) && !ec) {
    fs::permissions(limits_.dir, fs::perms::owner_all, ec);
  }
  if (ec) {
    *error = fmt::format("--recording.dir {}: {}", limits_.dir, ec.message());
    return false;
  }
  fs::directory_iterator it(limits_.dir, ec);
  if (ec) {
    *error = fmt::format("--recording.dir {}: {}", limits_.dir, ec.message());
    return false;
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() != kSuffix || !it->is_regular_file(ec)) continue;
    const std::string id = p.stem().string();
    if (!ValidId(id)) continue;
    Recording r;
    r.id = id;
    r.path = p.string();
    r.state = "done";
    r.reason = "found at start";
    struct stat st {};
    if (stat(r.path.c_str(), &st) == 0) {
      r.started = SystemClock::from_time_t(st.st_mtime);
      r.ended = r.started;
      r.bytes = static_cast<uint64_t>(st.st_size);
    }
    recordings_.push_back(r);
  }
  if (ec) {
    *error = fmt::format("--recording.dir {}: {}", limits_.dir, ec.message());
    return false;
  }
  std::sort(recordings_.begin(), recordings_.end(),
            [](const Recording& a, const Recording& b) {
              return std::tie(a.started, a.id) < std::tie(b.started, b.id);
            });
  return true;
}

namespace {

Json Describe(const RecordingApi::Recording& r) {
  Json j;
  j["id"] = r.id;
  j["state"] = r.state;
  if (!r.reason.empty()) j["reason"] = r.reason;
  j["container"] = r.container;
  if (!r.container.empty()) {
    // Ended with none: the name matched no process while it ran.
    j["container_records"] =
        r.ended ? Json(r.container_records) : Json(nullptr);
  }
  j["started"] = Rfc3339(r.started);
  j["ended"] = r.ended ? Json(Rfc3339(*r.ended)) : Json(nullptr);
  j["records"] = r.records;
  j["bytes"] = r.bytes;
  j["capture"] = std::string(kPrefix) + "/" + r.id + "/capture";
  // Held at the start and seen from its next record on (docs/
  // recording-api.md, "Not carried").
  j["not_carried"] = Json{{"held_off", r.not_carried.held_off},
                          {"evictions", r.not_carried.evictions},
                          {"runlist_shapes", r.not_carried.runlist_shapes}};
  return j;
}

}  // namespace

bool RecordingApi::Handles(const std::string& path) {
  const std::string prefix = kPrefix;
  return path == prefix || path.rfind(prefix + "/", 0) == 0;
}

ApiResponse RecordingApi::Handle(const ApiRequest& request) {
  const std::string prefix = kPrefix;
  const std::string& method = request.method;
  if (request.path == prefix) {
    if (method == "GET" || method == "HEAD") return List();
    if (method == "POST") return Start(request);
    return Error(405, "use GET to list recordings or POST to start one",
                 "Allow: GET, HEAD, POST\r\n");
  }
  // /api/v1/recordings/ID[/action]
  std::string rest = request.path.substr(prefix.size() + 1);
  std::string action;
  if (const auto slash = rest.find('/'); slash != std::string::npos) {
    action = rest.substr(slash + 1);
    rest.resize(slash);
  }
  const std::string& id = rest;
  if (!ValidId(id)) return Error(404, "no such recording");
  if (action.empty()) {
    if (method == "GET" || method == "HEAD") {
      std::lock_guard<std::mutex> lock(mu_);
      Recording* r = FindLocked(id);
      if (r == nullptr) return Error(404, "no recording " + id);
      return Ok(200, Describe(*r));
    }
    if (method == "DELETE") return Delete(id);
    return Error(405, "use GET or DELETE on a recording",
                 "Allow: GET, HEAD, DELETE\r\n");
  }
  if (action == "stop") {
    if (method != "POST") {
      return Error(405, "use POST to stop a recording", "Allow: POST\r\n");
    }
    return Stop(id);
  }
  if (action == "capture") {
    if (method != "GET" && method != "HEAD") {
      return Error(405, "use GET to download a capture",
                   "Allow: GET, HEAD\r\n");
    }
    return Download(id);
  }
  return Error(404, "no such path: " + request.path);
}

ApiResponse RecordingApi::Start(const ApiRequest& request) {
  std::string container;
  std::optional<double> duration;
  uint64_t max_bytes = limits_.max_bytes;
  for (const auto& [name, value] : request.query) {
    if (name == "container") {
      container = value;
    } else if (name == "duration") {
      char* end = nullptr;
      errno = 0;
      const double s = std::strtod(value.c_str(), &end);
      if (value.empty() || end != value.c_str() + value.size() || errno != 0 ||
          !(s > 0) || s > kMaxDurationSeconds) {
        return Error(400, fmt::format("duration={}: give seconds, more than 0 "
                                      "and at most {}",
                                      value, kMaxDurationSeconds));
      }
      duration = s;
    } else if (name == "max_bytes") {
      const auto n = ParseCount(value);
      if (!n || *n < kMinMaxBytes || *n > limits_.max_bytes) {
        return Error(400, fmt::format("max_bytes={}: give bytes, at least {} "
                                      "and at most --recording.max-bytes ({})",
                                      value, kMinMaxBytes, limits_.max_bytes));
      }
      max_bytes = *n;
    } else {
      return Error(400, fmt::format("unknown parameter {}; known: container, "
                                    "duration, max_bytes",
                                    name));
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (writer_ != nullptr) {
    const Recording& running = recordings_.back();
    return Error(409, fmt::format("recording {} is running: stop it first "
                                  "(POST {}/{}/stop); one runs at a time",
                                  running.id, kPrefix, running.id));
  }
  PruneLocked();
  Recording r;
  r.id = NewIdLocked();
  r.path = (fs::path(limits_.dir) / (r.id + kSuffix)).string();
  r.container = container;
  r.state = "recording";
  r.started = SystemClock::now();
  r.max_bytes = max_bytes;
  if (duration) {
    r.deadline =
        std::chrono::steady_clock::now() +
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(*duration));
  }
  std::string error;
  writer_ = CaptureWriter::Create(r.path, &error, 0, CaptureCompression::kZstd);
  if (writer_ == nullptr) {
    Log().Write(LogLevel::kWarn, "recording API: " + error);
    return Error(507, error);
  }
  if (!pipeline_->StartRecording(writer_.get(), container, &r.not_carried)) {
    // Another recorder owns the pipeline (not one of this API's).
    (void)writer_->Close(&error);
    writer_.reset();
    std::remove(r.path.c_str());
    return Error(409, "the pipeline is already recording");
  }
  recordings_.push_back(r);
  Log().WriteAlways(LogLevel::kInfo,
                    fmt::format("recording {} started{}", r.id,
                                container.empty() ? "" : " of " + container));
  ApiResponse response = Ok(201, Describe(r));
  response.extra_headers = fmt::format("Location: {}/{}\r\n", kPrefix, r.id);
  return response;
}

ApiResponse RecordingApi::List() {
  std::lock_guard<std::mutex> lock(mu_);
  Json list = Json::array();
  for (const Recording& r : recordings_) {
    list.push_back(Describe(r));
  }
  return Ok(200, Json{{"recordings", list}});
}

ApiResponse RecordingApi::Stop(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  Recording* r = FindLocked(id);
  if (r == nullptr) return Error(404, "no recording " + id);
  if (r->state == "recording") EndLocked("stopped");  // r stays in place
  return Ok(200, Describe(*r));
}

ApiResponse RecordingApi::Download(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  Recording* r = FindLocked(id);
  if (r == nullptr) return Error(404, "no recording " + id);
  if (r->state == "recording") return StillRunning(id);
  ApiResponse response;
  response.file = r->path;
  response.download_name = r->id + kSuffix;
  return response;
}

ApiResponse RecordingApi::Delete(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  Recording* r = FindLocked(id);
  if (r == nullptr) return Error(404, "no recording " + id);
  if (r->state == "recording") return StillRunning(id);
  std::error_code ec;
  fs::remove(r->path, ec);
  if (ec)
    return Error(500,
                 fmt::format("cannot delete {}: {}", r->path, ec.message()));
  recordings_.erase(recordings_.begin() + (r - recordings_.data()));
  ApiResponse response;
  response.status = 204;
  return response;
}

void RecordingApi::Tick() {
  std::lock_guard<std::mutex> lock(mu_);
  if (writer_ != nullptr) {
    Recording& r = recordings_.back();
    pipeline_->FlushRecording();
    r.records = writer_->Records();
    r.bytes = FileBytes(r.path);
    if (writer_->Failed()) {
      EndLocked("write failed");
    } else if (r.deadline && std::chrono::steady_clock::now() >= *r.deadline) {
      EndLocked("duration");
    } else if (r.bytes >= r.max_bytes) {
      EndLocked("size limit");
    }
  }
  PruneLocked();
}

void RecordingApi::EndLocked(const std::string& reason) {
  Recording& r = recordings_.back();
  r.container_records = pipeline_->StopRecording();
  std::string error;
  const bool closed = writer_->Close(&error);
  r.records = writer_->Records();
  writer_.reset();
  r.bytes = FileBytes(r.path);
  r.ended = SystemClock::now();
  r.state = closed ? "done" : "failed";
  r.reason = closed ? reason : error;
  Log().WriteAlways(closed ? LogLevel::kInfo : LogLevel::kWarn,
                    fmt::format("recording {} ended ({}): {} records, {} bytes",
                                r.id, r.reason, r.records, r.bytes));
}

void RecordingApi::PruneLocked() {
  const auto now = SystemClock::now();
  uint64_t total = 0;
  for (const Recording& r : recordings_) total += r.bytes;
  for (auto it = recordings_.begin(); it != recordings_.end();) {
    const bool finished = it->state != "recording";
    const bool expired =
        finished && it->ended && now - *it->ended > limits_.retention;
    const bool over = finished && total > limits_.max_bytes;
    if (!expired && !over) {
      ++it;
      continue;
    }
    std::error_code ec;
    fs::remove(it->path, ec);
    Log().WriteAlways(LogLevel::kInfo,
                      fmt::format("recording {} deleted ({})", it->id,
                                  expired ? "--recording.retention"
                                          : "--recording.max-bytes"));
    total -= it->bytes;
    it = recordings_.erase(it);
  }
}

std::string RecordingApi::NewIdLocked() const {
  const std::string base =
      fmt::format("{:%Y%m%dT%H%M%SZ}",
                  std::chrono::floor<std::chrono::seconds>(SystemClock::now()));
  for (int n = 1;; ++n) {
    const std::string id = n == 1 ? base : fmt::format("{}-{}", base, n);
    const bool taken =
        std::any_of(recordings_.begin(), recordings_.end(),
                    [&](const Recording& r) { return r.id == id; });
    std::error_code ec;
    if (!taken && !fs::exists(fs::path(limits_.dir) / (id + kSuffix), ec)) {
      return id;
    }
  }
}

RecordingApi::Recording* RecordingApi::FindLocked(const std::string& id) {
  for (Recording& r : recordings_) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

}  // namespace gpuq
