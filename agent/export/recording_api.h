// The recording API (docs/recording-api.md): captures started, listed,
// stopped, downloaded and deleted over the agent's own listener, kept in one
// directory bounded in size and age. The HTTP side is metrics_server.cc's;
// this answers requests as values, so it is tested without a socket.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "model/pipeline.h"
#include "sources/capture.h"

namespace gpuq {

struct RecordingLimits {
  std::string dir;  ///< where captures are kept; "" = the API is off
  /// The directory's captures together: the oldest finished ones are
  /// deleted to stay under it, and a recording that reaches it alone stops.
  uint64_t max_bytes = 1ull << 30;
  /// Finished captures older than this are deleted.
  std::chrono::seconds retention = std::chrono::hours(24);
};

struct ApiRequest {
  std::string method;                        ///< GET, POST, DELETE, HEAD
  std::string path;                          ///< decoded, no query string
  std::map<std::string, std::string> query;  ///< decoded parameters
};

struct ApiResponse {
  int status = 200;
  std::string body;  ///< JSON (or one line of text with an error status)
  /// When set, the response is this file's bytes instead of `body`
  /// (a capture), named `download_name` for the client.
  std::string file;
  std::string download_name;
  std::string extra_headers;  ///< "Name: value\r\n" lines
};

/// Thread-safety: Handle() from any thread (civetweb's workers); a thread
/// of its own enforces durations and limits once a second.
class RecordingApi {
 public:
  /// One recording, as the API lists it.
  struct Recording {
    std::string id;
    std::string path;
    std::string container;
    std::string state;   ///< recording, done, failed
    std::string reason;  ///< why it ended
    std::chrono::system_clock::time_point started;
    std::optional<std::chrono::system_clock::time_point> ended;
    std::optional<std::chrono::steady_clock::time_point> deadline;
    uint64_t max_bytes = 0;
    uint64_t records = 0;
    uint64_t bytes = 0;
    /// With a container filter: that container's records, once ended (0:
    /// the name matched nothing while it ran).
    uint64_t container_records = 0;
    /// What its start could not carry (Pipeline::StartRecording).
    Model::Unrecorded not_carried;
  };

  /// Makes `limits.dir` (0700) if missing and lists the captures already
  /// there as finished. Null with *error (one line) if the directory cannot
  /// be made or read.
  static std::unique_ptr<RecordingApi> Create(const RecordingLimits& limits,
                                              Pipeline* pipeline,
                                              std::string* error);
  /// Stops a running recording (its capture stays complete).
  ~RecordingApi();
  RecordingApi(const RecordingApi&) = delete;
  RecordingApi& operator=(const RecordingApi&) = delete;

  /// Whether `path` is the API's (under /api/v1/recordings).
  static bool Handles(const std::string& path);
  ApiResponse Handle(const ApiRequest& request);

  /// Once a second: flushes the running capture, ends it at its duration,
  /// its size limit or a write error, and applies retention and the size
  /// budget. Public for tests (the thread calls it).
  void Tick();

 private:
  RecordingApi(RecordingLimits limits, Pipeline* pipeline);
  bool ScanDirectory(std::string* error);
  ApiResponse Start(const ApiRequest& request);
  ApiResponse List();
  ApiResponse Stop(const std::string& id);
  ApiResponse Download(const std::string& id);
  ApiResponse Delete(const std::string& id);
  /// Ends the running recording, `reason` saying why (mu_ held).
  void EndLocked(const std::string& reason);
  /// Deletes finished captures past retention, then the oldest while the
  /// directory is over its budget (mu_ held).
  void PruneLocked();
  std::string NewIdLocked() const;
  Recording* FindLocked(const std::string& id);

  const RecordingLimits limits_;
  Pipeline* const pipeline_;
  std::mutex mu_;
  std::vector<Recording> recordings_;      ///< oldest first
  std::unique_ptr<CaptureWriter> writer_;  ///< the running recording's
  /// Stopped by the destructor before the members it reads go.
  std::unique_ptr<class PeriodicThread> ticker_;
};

}  // namespace gpuq
