// Command-line interface: what the user asked for, parsed and validated.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/host_paths.h"
#include "common/log.h"
#include "export/once_render.h"
#include "loader/hooks.h"
#include "report/report_format.h"
#include "sources/capture.h"
#include "submissions/submission_readers.h"

namespace gpuq {

enum class Command { kDaemon, kOnce, kCheck, kRecord, kVersion, kTop, kReport };

/// One CAPTURE argument of `report`: `LABEL=PATH`, or a path whose run the
/// report names by itself (report/report_tables.h, RunLabels).
struct ReportCapture {
  std::string label;  ///< "" when none was given
  std::string path;
};

struct Options {
  Command command = Command::kDaemon;
  HostPaths paths;
  std::string replay;  ///< capture to read instead of the kernel
  bool allow_truncated = false;
  std::string listen_address = "0.0.0.0:9464";
  std::string web_config_file;  ///< --web.config.file: basic auth users
  /// --recording.*: the recording API (off while dir is empty).
  std::string recording_dir;
  uint64_t recording_max_bytes = 1ull << 30;
  std::chrono::seconds recording_retention{std::chrono::hours(24)};
  std::chrono::milliseconds interval{1000};  ///< --once window; top refresh
  std::chrono::milliseconds reconcile_interval{10000};
  OnceFormat output = OnceFormat::kTable;  ///< --output of --once
  bool allow_fentry = true;
  TierRequest probe_tier = TierRequest::kAuto;  ///< --probe-tier
  std::string btf_path;                         ///< --btf
  bool verify = false;                          ///< check --verify
  std::string record_path;  ///< record -o/--output/--output-file
  std::optional<std::chrono::milliseconds> duration;  ///< record --duration
  std::vector<std::string> record_command;  ///< record -- COMMAND ARGS...
  std::string record_container;             ///< record --container
  /// record --from: a running agent's address (its recording API).
  std::string record_from;
  /// record --compress (zstd by default: readers take either).
  CaptureCompression record_compression = CaptureCompression::kZstd;
  /// top --speed: replay pace, times the recorded speed; 0 = as fast as
  /// possible.
  double replay_speed = 1.0;
  std::vector<ReportCapture> report_captures;  ///< report CAPTURE...
  report::ReportFormat report_format = report::ReportFormat::kText;
  // Attribution and labels.
  bool pid_comm_labels = false;
  std::vector<std::string> label_allowlist;
  size_t max_containers = 500;
  std::chrono::milliseconds container_grace{std::chrono::minutes(5)};
  bool runtime_lookup = true;
  std::vector<std::string> docker_sockets;  ///< empty: the defaults
  std::string run_dir;                      ///< empty: <host root>/run
  std::chrono::milliseconds runtime_timeout{2000};
  std::string host_root;  ///< --host-root as given ("" = /)
  // Submissions.
  std::chrono::milliseconds sample_interval{1000};  ///< 0: no sampling
  DoorbellMode doorbells = DoorbellMode::kOff;
  std::vector<std::string> hsa_runtimes;  ///< --hsa-runtime, repeatable
  // Logging.
  LogLevel log_level = LogLevel::kInfo;  ///< --log.level; -v: debug
  /// --log.format
  LogFormat log_format = LogFormat::kLogfmt;
};

/// Parses argv. Returns the exit code to use when the program should stop
/// now (--help: 0, bad usage: 2, a file it names that cannot be read: 1,
/// with the message printed), or nullopt.
std::optional<int> ParseOptions(int argc, char** argv, Options* out);

}  // namespace gpuq
