#include "cli/options.h"

#include <fmt/format.h>
#include <gpuq/abi.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "common/bounded_read.h"
#include "common/log.h"

namespace gpuq {
namespace {

// A duration: seconds, alone or with a unit (ms, s, m), converted by CLI11's
// AsNumberWithUnit into seconds, which the flag's double then holds. From 0
// to 1e9 s; anything else is refused in one line (an interval of "s" alone,
// which AsNumberWithUnit would take as 1 s, too).
CLI::Validator DurationTransform() {
  const CLI::AsNumberWithUnit units(
      std::map<std::string, double>{
          {"ms", 1e-3}, {"s", 1.0}, {"m", 60.0}, {"h", 3600.0}},
      CLI::AsNumberWithUnit::CASE_SENSITIVE);
  return CLI::Validator(
      [units](std::string& value) -> std::string {
        const std::string refused = fmt::format(
            "'{}' is not a duration (examples: 1s, 500ms, 2m, 10)", value);
        if (value.find_first_of("0123456789") == std::string::npos) {
          return refused;
        }
        std::string seconds = value;
        try {
          units(seconds);
        } catch (const CLI::ValidationError&) {
          return refused;
        }
        // AsNumberWithUnit wrote a number CLI11 read (strtold's syntax).
        const double s = std::strtod(seconds.c_str(), nullptr);
        if (!std::isfinite(s) || s < 0 || s > 1e9) return refused;
        value = seconds;
        return "";
      },
      "");
}

// Adds a duration flag (DurationTransform) to `app`, holding seconds in
// *seconds; its default is what *seconds holds (below 0: none).
CLI::Option* AddDuration(CLI::App& app, const std::string& name,
                         double* seconds, const std::string& help) {
  CLI::Option* option = app.add_option(name, *seconds, help)
                            ->transform(DurationTransform())
                            ->type_name("DURATION");
  if (*seconds >= 0) option->default_str(fmt::format("{}s", *seconds));
  return option;
}

std::chrono::milliseconds ToMilliseconds(double seconds) {
  return std::chrono::milliseconds(std::llround(seconds * 1000));
}

// "host:port" or ":port"; port 0..65535.
CLI::Validator ListenAddressValidator() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        const auto colon = value.rfind(':');
        const std::string_view port =
            colon == std::string::npos
                ? std::string_view()
                : std::string_view(value).substr(colon + 1);
        unsigned n = 0;
        const auto [end, ec] =
            std::from_chars(port.data(), port.data() + port.size(), n);
        if (port.empty() || ec != std::errc() ||
            end != port.data() + port.size() || n > 65535) {
          return fmt::format("'{}' is not HOST:PORT (example: 0.0.0.0:9464)",
                             value);
        }
        return "";
      },
      "HOST:PORT");
}

// A flag's choices: each word with the value it stands for, in the order
// --help and the refusal list them.
template <typename E>
using Choices = std::vector<std::pair<std::string, E>>;

// The choices of an enum whose names `name` gives, so they are written
// once, where the enum is.
template <typename E>
Choices<E> NamedBy(std::initializer_list<E> values, const char* (*name)(E)) {
  Choices<E> choices;
  for (E value : values) choices.emplace_back(name(value), value);
  return choices;
}

// Adds `names`, taking one word of `choices` into *value (whose value now
// is the default shown). CLI11's IsMember refuses any other word, listing
// these; its Transformer then hands CLI11 the enum's integer, which is how
// CLI11 reads an enum (the integer typed by the user is a word IsMember has
// already refused).
template <typename E>
CLI::Option* AddChoice(CLI::App& app, const std::string& names, E* value,
                       const Choices<E>& choices, const std::string& help) {
  std::string words, current;
  for (const auto& [word, choice] : choices) {
    words += (words.empty() ? "" : ",") + word;
    if (choice == *value) current = word;
  }
  CLI::Validator validator = CLI::IsMember(choices) & CLI::Transformer(choices);
  validator.description("{" + words + "}");
  return app.add_option(names, *value, help)
      ->transform(validator)
      ->type_name("TEXT")
      ->default_str(current);
}

const Choices<CaptureCompression>& CaptureCompressions() {
  static const Choices<CaptureCompression> kCompressions = {
      {"zstd", CaptureCompression::kZstd}, {"none", CaptureCompression::kNone}};
  return kCompressions;
}

const Choices<DoorbellMode>& DoorbellModes() {
  static const Choices<DoorbellMode> kModes = {
      {"off", DoorbellMode::kOff}, {"uprobe", DoorbellMode::kUprobe}};
  return kModes;
}

}  // namespace

namespace {

// What the flags hold until they are checked and turned into Options (those
// CLI11 can fill in directly go straight into Options).
struct RawFlags {
  bool once = false;
  // Durations in seconds (DurationTransform); -1: not given.
  double interval = 1;
  std::string host_root, sysfs_root, procfs_root;
  double reconcile = 10;
  bool no_fentry = false;
  double grace = 300, runtime_timeout = 2;
  bool no_runtime_lookup = false;
  double sample_interval = 1;
  bool verbose = false;
  double duration = -1;
  double recording_retention = 24 * 3600;
  std::vector<std::string> report_captures;  // [LABEL=]PATH each
  // --once's --output: given elsewhere, it is refused (-o is each command's
  // own, and falls through to --once's only from a command without one).
  CLI::Option* once_output = nullptr;
};

struct Subcommands {
  CLI::App* check = nullptr;
  CLI::App* record = nullptr;
  CLI::App* top = nullptr;
  CLI::App* report = nullptr;
};

// Each Add*Flags adds one group, in the order --help lists them.

void AddSnapshotFlags(CLI::App& app, RawFlags* raw, Options* out) {
  app.add_flag("--once", raw->once,
               "Print a snapshot (queues per container and GPU) and exit. "
               "Live: measured over --interval; with --replay: the whole "
               "capture.");
  AddDuration(app, "--interval", &raw->interval,
              "Measurement window of --once on a live kernel; how often "
              "top refreshes.");
  raw->once_output = AddChoice(
      app, "--output,-o", &out->output, OnceFormats(),
      "Format of --once: table (fits 120 columns), wide (every column), "
      "json or prometheus. (record's -o/--output is its capture file, "
      "report's its format.)");
}

void AddReplayFlags(CLI::App& app, Options* out) {
  app.add_option("--replay", out->replay,
                 "Read events from a capture file (gpuq-agent record) instead "
                 "of the kernel. Needs no privileges.");
  app.add_flag("--allow-truncated", out->allow_truncated,
               "Replay the complete records of a truncated capture.");
}

void AddRecordingFlags(CLI::App& app, RawFlags* raw, Options* out) {
  app.add_option("--recording.dir", out->recording_dir,
                 "Serve the recording API (/api/v1/recordings: start, list, "
                 "stop, download; docs/recording-api.md) behind the web "
                 "config, keeping captures in this directory. Off unless "
                 "given.");
  app.add_option("--recording.max-bytes", out->recording_max_bytes,
                 "The recording directory's captures together: the oldest "
                 "are deleted to stay under it, and a recording that reaches "
                 "it stops (1GiB, 500MB, ...).")
      ->transform(CLI::AsSizeValue(false))
      ->default_str("1GiB");
  AddDuration(app, "--recording.retention", &raw->recording_retention,
              "Finished captures older than this are deleted (24h, 90m, "
              "...).");
}

void AddWebFlags(CLI::App& app, Options* out) {
  app.add_option("--web.listen-address", out->listen_address,
                 "Where /metrics is served.")
      ->check(ListenAddressValidator())
      ->capture_default_str();
  app.add_option("--web.config.file", out->web_config_file,
                 "Web config (YAML, the Prometheus exporter-toolkit format): "
                 "basic_auth_users with bcrypt hashes protect /metrics; "
                 "tls_server_config serves it over HTTPS (deploy/README.md).");
}

void AddKernelFlags(CLI::App& app, RawFlags* raw, Options* out) {
  app.add_option("--host-root", raw->host_root,
                 "Read the host's /sys and /proc under this directory (a "
                 "container with the host's trees mounted at /host).");
  app.add_option("--sysfs-root", raw->sysfs_root,
                 "Root of sysfs (default /sys).");
  app.add_option("--procfs-root", raw->procfs_root,
                 "Root of procfs (default /proc).");
  AddDuration(app, "--reconcile-interval", &raw->reconcile,
              "How often the model is checked against KFD sysfs.");
  app.add_flag("--no-fentry", raw->no_fentry,
               "Use kprobes even where fentry would work.");
  AddChoice(app, "--probe-tier", &out->probe_tier,
            NamedBy({TierRequest::kAuto, TierRequest::kArgs,
                     TierRequest::kTracepoint},
                    TierRequestName),
            "auto: per hook, the BTF tiers where amdgpu has BTF, else "
            "the BTF-free args-kprobe tier; args: force the args-kprobe "
            "tier; tracepoint: force the syscall-tracepoint tier "
            "(docs/probe-tiers.md).");
  app.add_option("--btf", out->btf_path,
                 "BTF with amdgpu's types for a module without BTF "
                 "(amdgpu-dkms): flat, or split over this kernel's vmlinux; "
                 "gives the BTF hooks on kprobes (docs/probe-tiers.md).");
}

void AddAttributionFlags(CLI::App& app, RawFlags* raw, Options* out) {
  app.add_flag("--labels.pid-comm", out->pid_comm_labels,
               "Add pid and comm labels to the queue series (one series per "
               "process: more cardinality).");
  app.add_option("--labels.runtime-allowlist", out->label_allowlist,
                 "Container runtime labels to copy onto per-container series "
                 "as label_<name> (comma separated).")
      ->delimiter(',');
  app.add_option("--max-containers", out->max_containers,
                 "Containers with series of their own; later ones are folded "
                 "into container=\"_other\" (counted by "
                 "gpuq_containers_folded).")
      ->check(CLI::Range(size_t{1}, size_t{1000000}))
      ->capture_default_str();
  AddDuration(app, "--container-grace", &raw->grace,
              "Series of a container holding no queue are removed after "
              "this long; idle processes fold into their container.");
  app.add_flag("--no-runtime-lookup", raw->no_runtime_lookup,
               "Do not ask container runtimes for names (labels keep ids).");
  app.add_option("--runtime.docker-socket", out->docker_sockets,
                 "Docker Engine API sockets to ask for names, in order "
                 "(default: /var/run/docker.sock, /run/podman/podman.sock "
                 "under --host-root). Repeatable.");
  app.add_option("--runtime.run-dir", out->run_dir,
                 "Where containerd and CRI-O keep OCI bundles (default: /run "
                 "under --host-root).");
  AddDuration(app, "--runtime.timeout", &raw->runtime_timeout,
              "Timeout of one runtime lookup (lookups never block events "
              "or /metrics).");
}

void AddSubmissionFlags(CLI::App& app, RawFlags* raw, Options* out) {
  AddDuration(app, "--sample-interval", &raw->sample_interval,
              "How often the write and read indexes of every ROCr queue are "
              "read from its process's memory (gpuq_submissions_total, "
              "gpuq_queue_pending_packets); 0 turns sampling off. Needs "
              "ptrace access to the processes (root, or CAP_SYS_PTRACE).");
  AddChoice(app, "--doorbells", &out->doorbells, DoorbellModes(),
            "Count doorbell rings with uprobes on libhsa-runtime64 "
            "(gpuq_doorbells_total): off or uprobe. Costs one uprobe hit "
            "per doorbell in the submitting process.");
  app.add_option("--hsa-runtime", out->hsa_runtimes,
                 "A libhsa-runtime64.so file to attach the doorbell uprobes "
                 "to, besides those found mapped by processes. Repeatable; "
                 "needs --doorbells=uprobe.");
}

void AddLoggingFlags(CLI::App& app, RawFlags* raw, Options* out) {
  AddChoice(app, "--log.level", &out->log_level,
            NamedBy({LogLevel::kError, LogLevel::kWarn, LogLevel::kInfo,
                     LogLevel::kDebug},
                    LogLevelName),
            "Least severe log lines written to stderr: error, warn, "
            "info or debug (libbpf's own messages too).");
  AddChoice(app, "--log.format", &out->log_format,
            NamedBy({LogFormat::kLogfmt, LogFormat::kJson}, LogFormatName),
            "Log lines as logfmt or json, each with ts, level and msg "
            "(docs/operations.md).");
  app.add_flag("-v,--verbose", raw->verbose, "Same as --log.level=debug.");
}

Subcommands AddSubcommands(CLI::App& app, RawFlags* raw, Options* out) {
  Subcommands sub;
  sub.check = app.add_subcommand(
      "check",
      "Report, per kernel hook, whether it can attach here and in which "
      "mode; exit non-zero if none can.");
  sub.check->add_flag(
      "--verify", out->verify,
      "Also load every program of each mode through the verifier.");
  sub.record = app.add_subcommand(
      "record", "Write the live event stream to a capture file.");
  // record's one output is its capture, in the one format captures have:
  // -o/--output names the file (as -o names what each command outputs).
  sub.record
      ->add_option("-o,--output-file,--output", out->record_path,
                   "Capture file to write.")
      ->required();
  AddDuration(*sub.record, "--duration", &raw->duration,
              "Stop after this long (with a command: whichever comes "
              "first; the command is then sent SIGTERM).");
  AddChoice(*sub.record, "--compress", &out->record_compression,
            CaptureCompressions(),
            "How the capture is stored: zstd (a fifth to a seventh of the "
            "size) or none; every command reads either.");
  sub.record->add_option(
      "--from", out->record_from,
      "Record on a running agent through its recording API (its address, "
      "http[s]://[USER:PASSWORD@]HOST:PORT; the agent runs with "
      "--recording.dir), then download the capture to -o.");
  sub.record->add_option("--container", out->record_container,
                         "Keep only this container's records (its name, "
                         "Kubernetes container name, short or full id); the "
                         "GPU topology and GPU-wide runlist records stay.");
  sub.record->add_option(
      "command", out->record_command,
      "After --: a command to run while recording; recording "
      "stops when it exits, and its exit status is returned.");
  sub.top = app.add_subcommand(
      "top",
      "Full-screen live view: containers, GPUs and queues with submission, "
      "preemption and eviction rates, refreshed every --interval "
      "(docs/top.md).");
  sub.top
      ->add_option("--speed", out->replay_speed,
                   "With --replay: N times the recorded speed; 0 or max: as "
                   "fast as possible.")
      ->transform(CLI::Transformer({{"max", "0"}}))
      ->capture_default_str();
  sub.report = app.add_subcommand(
      "report",
      "Analyze captures: queues per GPU and type, submissions, preemption, "
      "evictions and the queue-level preemption verdict (docs/report.md). "
      "Several captures: one comparison table, a column each.");
  sub.report
      ->add_option("captures", raw->report_captures,
                   "Capture files, each PATH or LABEL=PATH: a comparison "
                   "names its columns by the labels, else by the shortest "
                   "path suffixes that tell the captures apart.")
      ->required();
  AddChoice(*sub.report, "--output,-o", &out->report_format,
            report::ReportFormats(),
            "Output format: html is one self-contained page with "
            "charts, perfetto a trace for ui.perfetto.dev "
            "(docs/report-visual.md).");
  return sub;
}

// Each Apply* turns one group's parsed flags into Options. Those that can
// refuse a combination print why and return false (exit status 2); the
// checks run in the order the groups are listed.

void ApplySnapshotFlags(const RawFlags& raw, Options* out) {
  out->interval = ToMilliseconds(raw.interval);
}

bool ApplyKernelFlags(const RawFlags& raw, Options* out) {
  out->host_root = raw.host_root;
  if (!raw.host_root.empty()) {
    out->paths = HostPaths::FromHostRoot(raw.host_root);
  }
  if (!raw.sysfs_root.empty()) out->paths.sysfs = raw.sysfs_root;
  if (!raw.procfs_root.empty()) out->paths.procfs = raw.procfs_root;
  out->reconcile_interval = ToMilliseconds(raw.reconcile);
  if (out->reconcile_interval.count() == 0) {
    Log().Write(LogLevel::kError, "--reconcile-interval must be above 0");
    return false;
  }
  out->allow_fentry = !raw.no_fentry;
  return true;
}

void ApplyAttributionFlags(const RawFlags& raw, Options* out) {
  out->container_grace = ToMilliseconds(raw.grace);
  out->runtime_timeout = ToMilliseconds(raw.runtime_timeout);
  out->runtime_lookup = !raw.no_runtime_lookup;
}

bool ApplySubmissionFlags(const RawFlags& raw, Options* out) {
  out->sample_interval = ToMilliseconds(raw.sample_interval);
  if (out->sample_interval.count() > 0 &&
      out->sample_interval < std::chrono::milliseconds(10)) {
    Log().Write(LogLevel::kError,
                "--sample-interval must be 0 (off) or at least 10ms");
    return false;
  }
  if (!out->hsa_runtimes.empty() && out->doorbells != DoorbellMode::kUprobe) {
    Log().Write(LogLevel::kError, "--hsa-runtime needs --doorbells=uprobe");
    return false;
  }
  if (!out->replay.empty() && out->doorbells == DoorbellMode::kUprobe) {
    Log().Write(LogLevel::kError,
                "--doorbells=uprobe counts live processes; it does not apply "
                "to --replay (a capture replays the doorbell counts it "
                "recorded)");
    return false;
  }
  return true;
}

void ApplyLoggingFlags(const RawFlags& raw, Options* out) {
  if (raw.verbose) out->log_level = LogLevel::kDebug;
}

// --once's -o/--output given with another command. -o is each command's
// own; with a command that has none (or written before the command) it
// reaches --once's, which would be ignored, or taken for another format.
bool CheckOnceOutput(const RawFlags& raw, Command command) {
  if (raw.once_output->count() == 0 || command == Command::kOnce) return true;
  std::string why;
  switch (command) {
    case Command::kReport:
      why =
          "-o/--output before `report` is --once's format; give report's "
          "after it: gpuq-agent report --output FORMAT CAPTURE...";
      break;
    case Command::kRecord:
      why =
          "-o/--output before `record` is --once's format; give record's "
          "capture file after it: gpuq-agent record -o FILE";
      break;
    case Command::kCheck:
      why = "-o/--output does not apply to `check`";
      break;
    case Command::kTop:
      why = "-o/--output does not apply to `top`";
      break;
    default:
      why =
          "-o/--output is the format of --once's snapshot: add --once (the "
          "daemon serves /metrics)";
      break;
  }
  Log().Write(LogLevel::kError, why);
  return false;
}

// report's CAPTURE arguments. LABEL=PATH where the text before the first
// '=' is a label (not empty, no '/') and the whole argument names no file:
// a capture's own name may hold a '='.
bool ApplyReportCaptures(const RawFlags& raw, Options* out) {
  std::set<std::string> labels;
  for (const std::string& arg : raw.report_captures) {
    ReportCapture capture{"", arg};
    const size_t eq = arg.find('=');
    struct stat st {};
    if (eq != std::string::npos && eq > 0 && arg.find('/') > eq &&
        stat(arg.c_str(), &st) != 0) {
      capture.label = arg.substr(0, eq);
      capture.path = arg.substr(eq + 1);
      if (capture.path.empty()) {
        Log().Write(LogLevel::kError,
                    fmt::format("report: {} names no capture (LABEL=PATH)",
                                OneLine(arg)));
        return false;
      }
      if (!labels.insert(capture.label).second) {
        Log().Write(LogLevel::kError,
                    fmt::format("report: label '{}' is given twice",
                                OneLine(capture.label)));
        return false;
      }
    }
    out->report_captures.push_back(std::move(capture));
  }
  return true;
}

// record --from drives another agent: what would act here does not apply.
bool CheckRecordFrom(const CLI::App& record, const Options& o) {
  if (o.record_from.empty()) return true;
  const char* refused = nullptr;
  if (!o.replay.empty()) refused = "--replay";
  if (!o.record_command.empty()) refused = "a command";
  if (record.count("--compress") != 0) refused = "--compress";
  if (refused != nullptr) {
    Log().Write(LogLevel::kError,
                fmt::format("record --from: {} does not apply (the agent at "
                            "{} records its own events, compressed)",
                            refused, OneLine(o.record_from)));
    return false;
  }
  if (o.record_from.rfind("http://", 0) != 0 &&
      o.record_from.rfind("https://", 0) != 0) {
    Log().Write(LogLevel::kError,
                fmt::format("record --from {}: give the agent's address as "
                            "http://HOST:PORT or https://HOST:PORT",
                            OneLine(o.record_from)));
    return false;
  }
  return true;
}

// The subcommand's own flags, then which command runs.
bool ApplySubcommand(const Subcommands& sub, const RawFlags& raw,
                     Options* out) {
  if (raw.duration >= 0) out->duration = ToMilliseconds(raw.duration);
  // strtold's syntax (CLI11) reads "inf" and "nan" as numbers.
  if (!std::isfinite(out->replay_speed) || out->replay_speed < 0) {
    Log().Write(LogLevel::kError,
                fmt::format("--speed {} is not a number >= 0 (or max)",
                            out->replay_speed));
    return false;
  }
  if (sub.check->parsed()) {
    out->command = Command::kCheck;
  } else if (sub.record->parsed()) {
    out->command = Command::kRecord;
    if (!CheckRecordFrom(*sub.record, *out)) return false;
  } else if (sub.top->parsed()) {
    out->command = Command::kTop;
  } else if (sub.report->parsed()) {
    out->command = Command::kReport;
    if (!out->replay.empty()) {
      Log().Write(LogLevel::kError,
                  "--replay does not apply to `report` (name the captures as "
                  "arguments)");
      return false;
    }
    return CheckOnceOutput(raw, out->command) && ApplyReportCaptures(raw, out);
  } else if (raw.once) {
    out->command = Command::kOnce;
  }
  if (!CheckOnceOutput(raw, out->command)) return false;
  out->recording_retention =
      std::chrono::seconds(std::llround(raw.recording_retention));
  if (!out->recording_dir.empty() && out->command != Command::kDaemon) {
    Log().Write(LogLevel::kError,
                "--recording.dir applies to the daemon (gpuq-agent without a "
                "subcommand); to record here, use `gpuq-agent record`");
    return false;
  }
  if (out->command != Command::kOnce && out->command != Command::kRecord &&
      out->command != Command::kDaemon && out->command != Command::kTop) {
    if (!out->replay.empty()) {
      Log().Write(LogLevel::kError, "--replay does not apply to `check`");
      return false;
    }
  }
  return true;
}

// The files flags name that are read late or by a library (the web config
// by the daemon only, --btf by libbpf, --hsa-runtime when the uprobes
// attach): checked now, so every command refuses one it cannot read in one
// line naming it, with exit 1 as for a capture that cannot be read (their
// reader checks captures before anything is loaded). Only what the file is
// matters here; its readers bound its size.
bool CheckInputFiles(const Options& o) {
  std::vector<std::pair<const char*, std::string>> files;
  if (!o.web_config_file.empty()) {
    files.emplace_back("--web.config.file", o.web_config_file);
  }
  if (!o.btf_path.empty()) files.emplace_back("--btf", o.btf_path);
  for (const std::string& f : o.hsa_runtimes) {
    files.emplace_back("--hsa-runtime", f);
  }
  for (const auto& [flag, path] : files) {
    std::string problem;
    if (!CheckRegularFile(path, std::numeric_limits<uint64_t>::max(),
                          &problem)) {
      Log().Write(LogLevel::kError,
                  fmt::format("{} {}: {}", flag, OneLine(path), problem));
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<int> ParseOptions(int argc, char** argv, Options* out) {
  CLI::App app{
      "gpuq-agent: live per-container visibility of AMD GPU hardware queues "
      "(amdkfd) with eBPF.\n"
      "Without a subcommand it serves Prometheus metrics; --once prints a "
      "snapshot and exits."};
  app.set_version_flag(
      "--version", fmt::format("gpuq-agent {} ({}), event ABI {}", GPUQ_VERSION,
                               GPUQ_GIT_COMMIT, GPUQ_ABI_VERSION));
  app.require_subcommand(0, 1);
  // Global options (--replay, --host-root, ...) may follow a subcommand.
  app.fallthrough();

  RawFlags raw;
  AddSnapshotFlags(app, &raw, out);
  AddReplayFlags(app, out);
  AddWebFlags(app, out);
  AddRecordingFlags(app, &raw, out);
  AddKernelFlags(app, &raw, out);
  AddAttributionFlags(app, &raw, out);
  AddSubmissionFlags(app, &raw, out);
  AddLoggingFlags(app, &raw, out);
  const Subcommands sub = AddSubcommands(app, &raw, out);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    Log().Write(LogLevel::kError,
                std::string(e.what()) + "; run with --help for usage");
    return 2;
  }

  ApplySnapshotFlags(raw, out);
  ApplyAttributionFlags(raw, out);
  ApplyLoggingFlags(raw, out);
  if (!ApplyKernelFlags(raw, out) || !ApplySubmissionFlags(raw, out) ||
      !ApplySubcommand(sub, raw, out)) {
    return 2;
  }
  if (!CheckInputFiles(*out)) return 1;
  return std::nullopt;
}

}  // namespace gpuq
