#include "common/log.h"

#include <cstdio>

namespace gpuq {
namespace {

// Distinct lines remembered for the repeat limit; a storm of distinct lines
// starts over instead of growing without bound.
constexpr size_t kMaxRemembered = 1024;

}  // namespace

std::string OneLine(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  return out;
}

const char* LogLevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "error";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
  }
  return "?";
}

bool ParseLogLevel(const std::string& name, LogLevel* level) {
  for (LogLevel l :
       {LogLevel::kError, LogLevel::kWarn, LogLevel::kInfo, LogLevel::kDebug}) {
    if (name == LogLevelName(l)) {
      *level = l;
      return true;
    }
  }
  return false;
}

Logger::Logger(Sink sink, std::chrono::milliseconds repeat_every)
    : sink_(std::move(sink)), repeat_every_(repeat_every) {}

void Logger::SetSink(Sink sink) {
  std::lock_guard<std::mutex> lock(mu_);
  sink_ = std::move(sink);
}

void Logger::Write(LogLevel level, const std::string& message,
                   Clock::time_point now) {
  if (!Enabled(level)) return;
  std::string line =
      fmt::format("gpuq-agent: {}: {}", LogLevelName(level), OneLine(message));
  std::lock_guard<std::mutex> lock(mu_);
  auto it = repeats_.find(line);
  if (it != repeats_.end()) {
    if (now - it->second.written < repeat_every_) {
      ++it->second.left_out;
      return;
    }
    if (it->second.left_out > 0) {
      line +=
          fmt::format(" ({} more since the last time)", it->second.left_out);
    }
    it->second = {now, 0};
  } else {
    if (repeats_.size() >= kMaxRemembered) repeats_.clear();
    repeats_.emplace(line, Repeat{now, 0});
  }
  sink_(line);
}

void Logger::WriteOnChange(LogLevel level, const std::string& key,
                           const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto [it, fresh] = last_.try_emplace(key);
    if (!fresh && it->second == message) return;
    if (message.empty()) {
      last_.erase(it);
      return;
    }
    it->second = message;
  }
  Write(level, key + ": " + message);
}

Logger& Log() {
  // Never destroyed: worker threads may still log while statics go away.
  static Logger* logger = new Logger([](const std::string& line) {
    // What a command printed on stdout comes first on a shared terminal
    // or file (stdout is buffered, stderr is not).
    std::fflush(stdout);
    std::fprintf(stderr, "%s\n", line.c_str());
  });
  return *logger;
}

}  // namespace gpuq
