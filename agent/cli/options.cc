#include "cli/options.h"

#include <fmt/format.h>
#include <gpuq/abi.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>
#include <iostream>

namespace gpuq {
namespace {

// CLI11 validator wrapper for durations.
CLI::Validator DurationValidator() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        if (!ParseDuration(value)) {
          return fmt::format(
              "'{}' is not a duration (examples: 1s, 500ms, 2m, 10)", value);
        }
        return "";
      },
      "DURATION");
}

// "host:port" or ":port"; port 0..65535.
CLI::Validator ListenAddressValidator() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        const auto colon = value.rfind(':');
        const std::string port =
            colon == std::string::npos ? "" : value.substr(colon + 1);
        char* end = nullptr;
        const long n = std::strtol(port.c_str(), &end, 10);
        if (port.empty() || *end != '\0' || n < 0 || n > 65535) {
          return fmt::format("'{}' is not HOST:PORT (example: 0.0.0.0:9464)",
                             value);
        }
        return "";
      },
      "HOST:PORT");
}

}  // namespace

std::optional<std::chrono::milliseconds> ParseDuration(
    const std::string& text) {
  size_t pos = 0;
  double value = 0;
  try {
    value = std::stod(text, &pos);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::string unit = text.substr(pos);
  double ms = 0;
  if (unit.empty() || unit == "s") {
    ms = value * 1000;
  } else if (unit == "ms") {
    ms = value;
  } else if (unit == "m") {
    ms = value * 60000;
  } else {
    return std::nullopt;
  }
  if (!std::isfinite(ms) || ms < 0 || ms > 1e12) return std::nullopt;
  return std::chrono::milliseconds(static_cast<int64_t>(ms));
}

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

  std::string host_root, sysfs_root, procfs_root, output = "table";
  std::string interval = "1s", reconcile = "10s", duration;
  bool once = false, no_fentry = false;

  app.add_flag("--once", once,
               "Print a snapshot (queues per container and GPU) and exit. "
               "Live: measured over --interval; with --replay: the whole "
               "capture.");
  app.add_option("--interval", interval,
                 "Measurement window of --once on a live kernel; how often "
                 "top refreshes.")
      ->check(DurationValidator())
      ->capture_default_str();
  app.add_option("--output,-o", output, "--once format.")
      ->check(CLI::IsMember({"table", "json", "prometheus"}))
      ->capture_default_str();
  app.add_option("--replay", out->replay,
                 "Read events from a capture file (gpuq-agent record) instead "
                 "of the kernel. Needs no privileges.")
      ->check(CLI::ExistingFile);
  app.add_flag("--allow-truncated", out->allow_truncated,
               "Replay the complete records of a truncated capture.");
  app.add_option("--web.listen-address", out->listen_address,
                 "Where /metrics is served.")
      ->check(ListenAddressValidator())
      ->capture_default_str();
  app.add_option("--web.config.file", out->web_config_file,
                 "Web config (YAML, the Prometheus exporter-toolkit format): "
                 "basic_auth_users with bcrypt hashes protect /metrics; "
                 "tls_server_config serves it over HTTPS (deploy/README.md).")
      ->check(CLI::ExistingFile);
  app.add_option("--host-root", host_root,
                 "Read the host's /sys and /proc under this directory (a "
                 "container with the host's trees mounted at /host).");
  app.add_option("--sysfs-root", sysfs_root, "Root of sysfs (default /sys).");
  app.add_option("--procfs-root", procfs_root,
                 "Root of procfs (default /proc).");
  app.add_option("--reconcile-interval", reconcile,
                 "How often the model is checked against KFD sysfs.")
      ->check(DurationValidator())
      ->capture_default_str();
  app.add_flag("--no-fentry", no_fentry,
               "Use kprobes even where fentry would work.");
  std::string probe_tier = "auto";
  app.add_option("--probe-tier", probe_tier,
                 "auto: per hook, the BTF tiers where amdgpu has BTF, else "
                 "the BTF-free args-kprobe tier; args: force the args-kprobe "
                 "tier; tracepoint: force the syscall-tracepoint tier "
                 "(docs/probe-tiers.md).")
      ->check(CLI::IsMember({"auto", "args", "tracepoint"}))
      ->capture_default_str();
  app.add_option("--btf", out->btf_path,
                 "BTF with amdgpu's types for a module without BTF "
                 "(amdgpu-dkms): flat, or split over this kernel's vmlinux; "
                 "gives the BTF hooks on kprobes (docs/probe-tiers.md).")
      ->check(CLI::ExistingFile);

  std::string grace = "5m", runtime_timeout = "2s";
  bool no_runtime_lookup = false;
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
  app.add_option("--container-grace", grace,
                 "Series of a container holding no queue are removed after "
                 "this long; idle processes fold into their container.")
      ->check(DurationValidator())
      ->capture_default_str();
  app.add_flag("--no-runtime-lookup", no_runtime_lookup,
               "Do not ask container runtimes for names (labels keep ids).");
  app.add_option("--runtime.docker-socket", out->docker_sockets,
                 "Docker Engine API sockets to ask for names, in order "
                 "(default: /var/run/docker.sock, /run/podman/podman.sock "
                 "under --host-root). Repeatable.");
  app.add_option("--runtime.run-dir", out->run_dir,
                 "Where containerd and CRI-O keep OCI bundles (default: /run "
                 "under --host-root).");
  app.add_option("--runtime.timeout", runtime_timeout,
                 "Timeout of one runtime lookup (lookups never block events "
                 "or /metrics).")
      ->check(DurationValidator())
      ->capture_default_str();

  std::string sample_interval = "1s", doorbells = "off";
  app.add_option("--sample-interval", sample_interval,
                 "How often the write and read indexes of every ROCr queue are "
                 "read from its process's memory (gpuq_submissions_total, "
                 "gpuq_queue_pending_packets); 0 turns sampling off. Needs "
                 "ptrace access to the processes (root, or CAP_SYS_PTRACE).")
      ->check(DurationValidator())
      ->capture_default_str();
  app.add_option("--doorbells", doorbells,
                 "Count doorbell rings with uprobes on libhsa-runtime64 "
                 "(gpuq_doorbells_total): off or uprobe. Costs one uprobe hit "
                 "per doorbell in the submitting process.")
      ->check(CLI::IsMember({"off", "uprobe"}))
      ->capture_default_str();
  app.add_option("--hsa-runtime", out->hsa_runtimes,
                 "A libhsa-runtime64.so file to attach the doorbell uprobes "
                 "to, besides those found mapped by processes. Repeatable; "
                 "needs --doorbells=uprobe.")
      ->check(CLI::ExistingFile);
  std::string log_level = "info";
  bool verbose = false;
  app.add_option("--log.level", log_level,
                 "Least severe log lines written to stderr: error, warn, "
                 "info or debug (libbpf's own messages too).")
      ->check(CLI::IsMember({"error", "warn", "info", "debug"}))
      ->capture_default_str();
  app.add_flag("-v,--verbose", verbose, "Same as --log.level=debug.");

  CLI::App* check = app.add_subcommand(
      "check",
      "Report, per kernel hook, whether it can attach here and in which "
      "mode; exit non-zero if none can.");
  check->add_flag("--verify", out->verify,
                  "Also load every program of each mode through the verifier.");
  CLI::App* record = app.add_subcommand(
      "record", "Write the live event stream to a capture file.");
  record->add_option("-o,--output-file", out->record_path, "Capture to write.")
      ->required();
  record
      ->add_option("--duration", duration,
                   "Stop after this long (with a command: whichever comes "
                   "first; the command is then sent SIGTERM).")
      ->check(DurationValidator());
  record->add_option("--container", out->record_container,
                     "Keep only this container's records (its name, "
                     "Kubernetes container name, short or full id); the GPU "
                     "topology and GPU-wide runlist records stay.");
  record->add_option("command", out->record_command,
                     "After --: a command to run while recording; recording "
                     "stops when it exits, and its exit status is returned.");
  std::string speed = "1";
  CLI::App* top = app.add_subcommand(
      "top",
      "Full-screen live view: containers, GPUs and queues with submission, "
      "preemption and eviction rates, refreshed every --interval "
      "(docs/top.md).");
  top->add_option("--speed", speed,
                  "With --replay: N times the recorded speed; 0 or max: as "
                  "fast as possible.")
      ->capture_default_str();
  CLI::App* report = app.add_subcommand(
      "report",
      "Analyze captures: queues per GPU and type, submissions, preemption, "
      "evictions and the queue-level preemption verdict (docs/report.md). "
      "Several captures: one comparison table, a column each.");
  report->add_option("captures", out->report_captures, "Capture files.")
      ->required();
  // The formats of report/report_format.h.
  report
      ->add_option("--output", out->report_output,
                   "Output format: html is one self-contained page with "
                   "charts, perfetto a trace for ui.perfetto.dev "
                   "(docs/report-visual.md).")
      ->check(CLI::IsMember({"text", "markdown", "json", "html", "perfetto"}))
      ->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "gpuq-agent: " << e.what() << "\nRun with --help for usage.\n";
    return 2;
  }

  out->container_grace = *ParseDuration(grace);
  out->runtime_timeout = *ParseDuration(runtime_timeout);
  out->runtime_lookup = !no_runtime_lookup;
  out->host_root = host_root;
  if (!host_root.empty()) out->paths = HostPaths::FromHostRoot(host_root);
  if (!sysfs_root.empty()) out->paths.sysfs = sysfs_root;
  if (!procfs_root.empty()) out->paths.procfs = procfs_root;
  out->interval = *ParseDuration(interval);
  out->reconcile_interval = *ParseDuration(reconcile);
  if (out->reconcile_interval.count() == 0) {
    std::cerr << "gpuq-agent: --reconcile-interval must be above 0\n";
    return 2;
  }
  out->sample_interval = *ParseDuration(sample_interval);
  if (out->sample_interval.count() > 0 &&
      out->sample_interval < std::chrono::milliseconds(10)) {
    std::cerr << "gpuq-agent: --sample-interval must be 0 (off) or at least "
                 "10ms\n";
    return 2;
  }
  out->doorbells =
      doorbells == "uprobe" ? DoorbellMode::kUprobe : DoorbellMode::kOff;
  if (!out->hsa_runtimes.empty() && out->doorbells != DoorbellMode::kUprobe) {
    std::cerr << "gpuq-agent: --hsa-runtime needs --doorbells=uprobe\n";
    return 2;
  }
  if (!out->replay.empty() && out->doorbells == DoorbellMode::kUprobe) {
    std::cerr << "gpuq-agent: --doorbells=uprobe counts live processes; it "
                 "does not apply to --replay (a capture replays the doorbell "
                 "counts it recorded)\n";
    return 2;
  }
  ParseLogLevel(log_level, &out->log_level);  // IsMember checked it
  if (verbose) out->log_level = LogLevel::kDebug;
  out->output = *ParseOnceFormat(output);
  out->allow_fentry = !no_fentry;
  ParseTierRequest(probe_tier, &out->probe_tier);
  if (!duration.empty()) out->duration = *ParseDuration(duration);

  if (speed == "max") speed = "0";
  char* speed_end = nullptr;
  out->replay_speed = std::strtod(speed.c_str(), &speed_end);
  if (speed.empty() || *speed_end != '\0' ||
      !std::isfinite(out->replay_speed) || out->replay_speed < 0) {
    std::cerr << "gpuq-agent: --speed '" << speed
              << "' is not a number >= 0 (or max)\n";
    return 2;
  }
  if (check->parsed()) {
    out->command = Command::kCheck;
  } else if (record->parsed()) {
    out->command = Command::kRecord;
  } else if (top->parsed()) {
    out->command = Command::kTop;
  } else if (report->parsed()) {
    out->command = Command::kReport;
    if (!out->replay.empty()) {
      std::cerr << "gpuq-agent: --replay does not apply to `report` (name "
                   "the captures as arguments)\n";
      return 2;
    }
    return std::nullopt;
  } else if (once) {
    out->command = Command::kOnce;
  }
  if (out->command != Command::kOnce && out->command != Command::kRecord &&
      out->command != Command::kDaemon && out->command != Command::kTop) {
    if (!out->replay.empty()) {
      std::cerr << "gpuq-agent: --replay does not apply to `check`\n";
      return 2;
    }
  }
  return std::nullopt;
}

}  // namespace gpuq
