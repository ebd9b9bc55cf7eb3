// Leveled log lines on stderr, for errors the agent would otherwise only
// count: runtime lookups, reconciliation, and libbpf's own messages at debug
// level (-v). Each line is logfmt or JSON (--log.format, as Prometheus
// exporters write them, docs/operations.md), with a timestamp; until the
// flags are read (usage errors) it is "gpuq-agent: error: ...".
//
// A small logger of our own rather than Debian's libspdlog-dev: one sink
// (stderr), four levels, a repeat limit and "once per change" are all the
// agent needs; spdlog would be a new build and run-time dependency (paired
// with a matching libfmt) for them, and has neither the repeat limit nor the
// change detection built in.
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace gpuq {

enum class LogLevel { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

/// `text` with every control byte (below 0x20, and 0x7f) written as \xNN:
/// input echoed into a message (a config line, a path, a flag's value)
/// cannot end the line early or send a terminal escape sequence.
std::string OneLine(std::string_view text);

/// `t` in RFC 3339, UTC, with milliseconds ("2026-12-01T20:00:00.000Z"):
/// how log lines are stamped, as the exporter toolkit stamps them.
std::string UtcTimestamp(std::chrono::system_clock::time_point t);

/// "error", "warn", "info", "debug" (the values of --log.level).
const char* LogLevelName(LogLevel level);
bool ParseLogLevel(const std::string& name, LogLevel* level);

/// How a line is written.
enum class LogFormat {
  /// "gpuq-agent: warn: <msg>": what is written before --log.format is read
  /// (usage errors, exit 2), and the logger's start.
  kPlain,
  /// ts=2026-12-01T20:00:00.000Z level=warn msg="<msg>" (go-logfmt's quoting)
  kLogfmt,
  /// {"ts":"2026-12-01T20:00:00.000Z","level":"warn","msg":"<msg>"}
  kJson,
};
/// "logfmt", "json" (the values of --log.format); "plain" for kPlain.
const char* LogFormatName(LogFormat format);
/// Only the values of --log.format: kPlain is not one.
bool ParseLogFormat(const std::string& name, LogFormat* format);

/// Thread-safety: every method may be called from any thread.
class Logger {
 public:
  using Clock = std::chrono::steady_clock;
  /// Receives each finished line, without its newline.
  using Sink = std::function<void(const std::string& line)>;
  /// The time each line is stamped with (tests fix it).
  using WallClock = std::function<std::chrono::system_clock::time_point()>;

  /// The same line is written at most once per `repeat_every`; the first
  /// one written after that says how many were left out meanwhile.
  explicit Logger(Sink sink, std::chrono::milliseconds repeat_every =
                                 std::chrono::seconds(10));

  void SetLevel(LogLevel level) { level_.store(level); }
  void SetFormat(LogFormat format) { format_.store(format); }
  /// Replaces the sink (tests capture what the agent's logger writes).
  void SetSink(Sink sink);
  void SetWallClock(WallClock clock);
  LogLevel level() const { return level_.load(); }
  LogFormat format() const { return format_.load(); }
  bool Enabled(LogLevel level) const { return level <= level_.load(); }

  /// Writes `message` at `level` in the format set if `level` is enabled
  /// and the same message at the same level was not written within the
  /// repeat interval.
  void Write(LogLevel level, const std::string& message,
             Clock::time_point now = Clock::now());

  /// Writes `message` whatever the level set and without the repeat limit:
  /// the lines a command always writes (where it serves, what it recorded,
  /// an internal error). The plain format leaves the level out
  /// ("gpuq-agent: <message>"); the others carry `level`.
  void WriteAlways(LogLevel level, const std::string& message);

  /// Writes `message` only when it differs from the last one reported under
  /// `key` (a lookup client, reconciliation): a lasting error is one line,
  /// not one per attempt. An empty message clears the key (the error is
  /// over), so the next error is written again.
  void WriteOnChange(LogLevel level, const std::string& key,
                     const std::string& message);

 private:
  struct Repeat {
    Clock::time_point written;
    uint64_t left_out = 0;
  };
  /// The finished line of `message` (already one line) at `level`; the
  /// plain format names the level only with `plain_level`. Under mu_ (the
  /// wall clock).
  std::string FormatLocked(LogLevel level, const std::string& message,
                           bool plain_level) const;

  Sink sink_;
  std::chrono::milliseconds repeat_every_;
  std::atomic<LogLevel> level_{LogLevel::kInfo};
  std::atomic<LogFormat> format_{LogFormat::kPlain};
  std::mutex mu_;
  WallClock wall_clock_;                     // guarded by mu_
  std::map<std::string, Repeat> repeats_;    // by level and message
  std::map<std::string, std::string> last_;  // by WriteOnChange key
};

/// The agent's logger, writing to stderr.
Logger& Log();

/// Log().Write of a fmt-formatted message, formatted only when enabled.
template <typename... Args>
void LogAt(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  if (Log().Enabled(level)) {
    Log().Write(level, fmt::format(format, std::forward<Args>(args)...));
  }
}

}  // namespace gpuq
