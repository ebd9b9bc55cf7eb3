#pragma once

#include <charconv>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>

namespace gpuq::report {

/// JSON text put out in pieces, as nlohmann's serializer writes the same
/// values, through a buffer that goes to the stream in large writes. The
/// JSON and Perfetto writers put out millions of small pieces (a busy
/// capture's 200,000 queue lifetimes, 2.5 million counter samples): one
/// ostream insertion each, and a json value made for every string, cost
/// more than the text.
class JsonStream {
 public:
  using Json = nlohmann::ordered_json;

  explicit JsonStream(std::ostream& out)
      : out_(out),
        serializer_(nlohmann::detail::output_adapter<char>(buf_), ' ',
                    // Names come from the kernel (comm), cgroup paths,
                    // runtimes and captures: never trust them to be valid
                    // UTF-8 (invalid bytes become U+FFFD).
                    Json::error_handler_t::replace) {
    buf_.reserve(kFlushAt + kFlushAt / 4);
  }
  JsonStream(const JsonStream&) = delete;
  JsonStream& operator=(const JsonStream&) = delete;
  ~JsonStream() { Flush(); }

  /// Text written as it is (punctuation, keys known to need no escape).
  JsonStream& operator<<(std::string_view raw) {
    buf_.append(raw);
    return Wrote();
  }
  JsonStream& operator<<(char c) {
    buf_.push_back(c);
    return Wrote();
  }
  JsonStream& Int(int64_t v) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, v).ptr;
    buf_.append(digits, end);
    return Wrote();
  }
  /// `n` spaces: an indent.
  JsonStream& Spaces(size_t n) {
    buf_.append(n, ' ');
    return Wrote();
  }
  /// `s` quoted and escaped as the serializer writes it. Printable ASCII
  /// without a quote or backslash, nearly every name, is copied as it is
  /// (the serializer copies those bytes unchanged too).
  JsonStream& String(std::string_view s) {
    if (Plain(s)) {
      buf_.push_back('"');
      buf_.append(s);
      buf_.push_back('"');
      return Wrote();
    }
    serializer_.dump(Json(std::string(s)), false, false, 0);
    return Wrote();
  }
  JsonStream& Number(double v) {
    serializer_.dump(Json(v), false, false, 0);
    return Wrote();
  }
  /// `value` as dump() writes it: compact, or pretty with `indent_step`
  /// spaces per level, its first line at `current_indent`.
  JsonStream& Value(const Json& value, bool pretty = false,
                    unsigned indent_step = 0, unsigned current_indent = 0) {
    serializer_.dump(value, pretty, false, indent_step, current_indent);
    return Wrote();
  }
  /// `s` as String() writes it, kept for a name written many times.
  static std::string Quoted(std::string_view s) {
    if (Plain(s)) return "\"" + std::string(s) + "\"";
    std::string out;
    nlohmann::detail::serializer<Json> quoter(
        nlohmann::detail::output_adapter<char>(out), ' ',
        Json::error_handler_t::replace);
    quoter.dump(Json(std::string(s)), false, false, 0);
    return out;
  }
  void Flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

 private:
  static constexpr size_t kFlushAt = 1 << 16;

  static bool Plain(std::string_view s) {
    for (const char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u > 0x7e || c == '"' || c == '\\') return false;
    }
    return true;
  }
  JsonStream& Wrote() {
    if (buf_.size() >= kFlushAt) Flush();
    return *this;
  }

  std::ostream& out_;
  std::string buf_;
  nlohmann::detail::serializer<Json> serializer_;  // writes into buf_
};

}  // namespace gpuq::report
