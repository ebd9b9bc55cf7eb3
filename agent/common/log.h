// Leveled log lines on stderr ("gpuq-agent: warn: ..."), for errors the
// agent would otherwise only count: runtime lookups, reconciliation, and
// libbpf's own messages at debug level (-v).
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

/// "error", "warn", "info", "debug" (the values of --log.level).
const char* LogLevelName(LogLevel level);
bool ParseLogLevel(const std::string& name, LogLevel* level);

/// Thread-safety: every method may be called from any thread.
class Logger {
 public:
  using Clock = std::chrono::steady_clock;
  /// Receives each finished line, without its newline.
  using Sink = std::function<void(const std::string& line)>;

  /// The same line is written at most once per `repeat_every`; the first
  /// one written after that says how many were left out meanwhile.
  explicit Logger(Sink sink, std::chrono::milliseconds repeat_every =
                                 std::chrono::seconds(10));

  void SetLevel(LogLevel level) { level_.store(level); }
  /// Replaces the sink (tests capture what the agent's logger writes).
  void SetSink(Sink sink);
  LogLevel level() const { return level_.load(); }
  bool Enabled(LogLevel level) const { return level <= level_.load(); }

  /// Writes "gpuq-agent: <level>: <message>" if `level` is enabled and the
  /// line was not written within the repeat interval.
  void Write(LogLevel level, const std::string& message,
             Clock::time_point now = Clock::now());

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
  Sink sink_;
  std::chrono::milliseconds repeat_every_;
  std::atomic<LogLevel> level_{LogLevel::kInfo};
  std::mutex mu_;
  std::map<std::string, Repeat> repeats_;    // by line
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
