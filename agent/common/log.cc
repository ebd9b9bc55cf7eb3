#include "common/log.h"

#include <fmt/chrono.h>

#include <cstdio>
#include <ctime>

namespace gpuq {
namespace {

// Distinct lines remembered for the repeat limit; a storm of distinct lines
// starts over instead of growing without bound.
constexpr size_t kMaxRemembered = 1024;

// The length of the well-formed UTF-8 sequence at text[i] (1 for ASCII), or
// 0 where the bytes there are not one (stray continuation bytes, overlong
// forms, surrogates, beyond U+10FFFF, cut short).
size_t Utf8Length(std::string_view text, size_t i) {
  const auto b = [&](size_t k) {
    return static_cast<unsigned char>(text[i + k]);
  };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the second byte's range
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;  // overlong
    if (c == 0xed) hi = 0x9f;  // surrogates
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;  // overlong
    if (c == 0xf4) hi = 0x8f;  // beyond U+10FFFF
  } else {
    return 0;
  }
  if (i + n > text.size() || b(1) < lo || b(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (b(k) < 0x80 || b(k) > 0xbf) return 0;
  }
  return n;
}

// `text` as the inside of a JSON string (the escapes logfmt's quoted values
// share): backslash and quote escaped, control bytes as \uXXXX (OneLine()
// leaves none; a stray one still cannot end the line), bytes that are not
// UTF-8 as U+FFFD, since a JSON reader refuses them.
std::string QuotedInside(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
      ++i;
      continue;
    }
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20) {
      out += fmt::format("\\u{:04x}", byte);
      ++i;
      continue;
    }
    const size_t n = Utf8Length(text, i);
    if (n == 0) {
      out += "\\ufffd";
      ++i;
      continue;
    }
    out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

// A logfmt value: bare when go-logfmt would write it bare (no space,
// control byte, '=', '"' or byte that is not UTF-8), else quoted.
std::string LogfmtValue(std::string_view text) {
  bool bare = !text.empty();
  for (size_t i = 0; bare && i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const size_t n = Utf8Length(text, i);
    bare = n != 0 && byte > 0x20 && byte != '=' && byte != '"';
    i += n == 0 ? 1 : n;
  }
  return bare ? std::string(text) : "\"" + QuotedInside(text) + "\"";
}

}  // namespace

std::string UtcTimestamp(std::chrono::system_clock::time_point t) {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  const auto ms = duration_cast<milliseconds>(t.time_since_epoch()).count();
  // Floor division: a time before 1970 still has 0..999 milliseconds.
  const auto seconds = ms / 1000 - (ms % 1000 < 0 ? 1 : 0);
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03}Z",
                     fmt::gmtime(static_cast<std::time_t>(seconds)),
                     ms - seconds * 1000);
}

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

const char* LogFormatName(LogFormat format) {
  switch (format) {
    case LogFormat::kPlain:
      return "plain";
    case LogFormat::kLogfmt:
      return "logfmt";
    case LogFormat::kJson:
      return "json";
  }
  return "?";
}

bool ParseLogFormat(const std::string& name, LogFormat* format) {
  for (LogFormat f : {LogFormat::kLogfmt, LogFormat::kJson}) {
    if (name == LogFormatName(f)) {
      *format = f;
      return true;
    }
  }
  return false;
}

Logger::Logger(Sink sink, std::chrono::milliseconds repeat_every)
    : sink_(std::move(sink)),
      repeat_every_(repeat_every),
      wall_clock_([] { return std::chrono::system_clock::now(); }) {}

void Logger::SetSink(Sink sink) {
  std::lock_guard<std::mutex> lock(mu_);
  sink_ = std::move(sink);
}

void Logger::SetWallClock(WallClock clock) {
  std::lock_guard<std::mutex> lock(mu_);
  wall_clock_ = std::move(clock);
}

std::string Logger::FormatLocked(LogLevel level, const std::string& message,
                                 bool plain_level) const {
  switch (format_.load()) {
    case LogFormat::kPlain:
      break;
    case LogFormat::kLogfmt:
      return fmt::format("ts={} level={} msg={}", UtcTimestamp(wall_clock_()),
                         LogLevelName(level), LogfmtValue(message));
    case LogFormat::kJson:
      return fmt::format(R"({{"ts":"{}","level":"{}","msg":"{}"}})",
                         UtcTimestamp(wall_clock_()), LogLevelName(level),
                         QuotedInside(message));
  }
  return plain_level
             ? fmt::format("gpuq-agent: {}: {}", LogLevelName(level), message)
             : "gpuq-agent: " + message;
}

void Logger::Write(LogLevel level, const std::string& message,
                   Clock::time_point now) {
  if (!Enabled(level)) return;
  std::string text = OneLine(message);
  // The repeat limit is on what was said, not on the line: the timestamp
  // differs every time.
  std::string key = std::string(LogLevelName(level)) + ": " + text;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = repeats_.find(key);
  if (it != repeats_.end()) {
    if (now - it->second.written < repeat_every_) {
      ++it->second.left_out;
      return;
    }
    if (it->second.left_out > 0) {
      text +=
          fmt::format(" ({} more since the last time)", it->second.left_out);
    }
    it->second = {now, 0};
  } else {
    if (repeats_.size() >= kMaxRemembered) repeats_.clear();
    repeats_.emplace(std::move(key), Repeat{now, 0});
  }
  sink_(FormatLocked(level, text, true));
}

void Logger::WriteAlways(LogLevel level, const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  sink_(FormatLocked(level, OneLine(message), false));
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
