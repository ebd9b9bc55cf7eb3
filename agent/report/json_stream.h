#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>

namespace gpuq::report {

/// JSON text put out in pieces, as nlohmann's serializer writes the same
/// values, gathered in a block that goes to the stream when it is full. The
/// JSON and Perfetto writers put out millions of small pieces (a busy
/// capture's 200,000 queue lifetimes, 2.5 million counter samples): one
/// ostream insertion each (std::cout, synced with stdio, takes each as a
/// locked fwrite), and a json value made for every string, cost more than
/// the text.
class JsonStream {
 public:
  using Json = nlohmann::ordered_json;

  explicit JsonStream(std::ostream& out)
      : out_(out),
        block_(new char[kBlock]),
        pos_(block_.get()),
        serializer_(nlohmann::detail::output_adapter<char>(scratch_), ' ',
                    // Names come from the kernel (comm), cgroup paths,
                    // runtimes and captures: never trust them to be valid
                    // UTF-8 (invalid bytes become U+FFFD).
                    Json::error_handler_t::replace) {}
  JsonStream(const JsonStream&) = delete;
  JsonStream& operator=(const JsonStream&) = delete;
  ~JsonStream() { Flush(); }

  /// Text written as it is (punctuation, keys known to need no escape).
  JsonStream& operator<<(std::string_view raw) {
    Put(raw.data(), raw.size());
    return *this;
  }
  JsonStream& operator<<(char c) {
    Put(&c, 1);
    return *this;
  }
  JsonStream& Int(int64_t v) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, v).ptr;
    Put(digits, static_cast<size_t>(end - digits));
    return *this;
  }
  /// `n` spaces: an indent.
  JsonStream& Spaces(size_t n) {
    while (n > 0) {
      const size_t k = std::min(Room(), n);
      std::memset(pos_, ' ', k);
      pos_ += k;
      n -= k;
    }
    return *this;
  }
  /// `s` quoted and escaped as the serializer writes it. Printable ASCII
  /// without a quote or backslash, nearly every name, is copied as it is
  /// (the serializer copies those bytes unchanged too).
  JsonStream& String(std::string_view s) {
    if (Plain(s)) {
      Put("\"", 1);
      Put(s.data(), s.size());
      Put("\"", 1);
      return *this;
    }
    return Serialized(Json(std::string(s)), false, 0, 0);
  }
  JsonStream& Number(double v) {
    // A whole number below 10^15 (a count, a zero bucket: most of a
    // report's numbers) is written as the serializer writes it, "12.0",
    // without its shortest-digits search; -0.0 keeps its sign there.
    if (std::fabs(v) < 1e15 && v == std::trunc(v) && !std::signbit(v)) {
      Int(static_cast<int64_t>(v));
      Put(".0", 2);
      return *this;
    }
    // The rest as the serializer's dump_float writes a double: null if not
    // finite, else nlohmann's own shortest digits (Grisu2), without a json
    // value made and its text copied through the serializer's adapter.
    if (!std::isfinite(v)) {
      Put("null", 4);
      return *this;
    }
    char digits[64];  // the serializer's number_buffer
    const char* end =
        nlohmann::detail::to_chars(digits, digits + sizeof digits, v);
    Put(digits, static_cast<size_t>(end - digits));
    return *this;
  }
  /// `value` as dump() writes it: compact, or pretty with `indent_step`
  /// spaces per level, its first line at `current_indent`.
  JsonStream& Value(const Json& value, bool pretty = false,
                    unsigned indent_step = 0, unsigned current_indent = 0) {
    return Serialized(value, pretty, indent_step, current_indent);
  }
  /// `s` as String() writes it, kept for a name written many times.
  static std::string Quoted(std::string_view s) {
    std::ostringstream out;
    JsonStream(out).String(s);  // flushed as the temporary goes
    return out.str();
  }
  /// Hands what is gathered to the stream (a full block at a time else).
  void Flush() {
    out_.write(block_.get(), pos_ - block_.get());
    pos_ = block_.get();
  }

 private:
  static constexpr size_t kBlock = 1 << 16;

  static bool Plain(std::string_view s) {
    for (const char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 || u > 0x7e || c == '"' || c == '\\') return false;
    }
    return true;
  }
  char* End() const { return block_.get() + kBlock; }
  /// Free bytes in the block, after handing it over if it is full.
  size_t Room() {
    if (pos_ == End()) Flush();
    return static_cast<size_t>(End() - pos_);
  }
  // Nearly every piece fits: one copy, inlined for the short literals.
  void Put(const char* s, size_t n) {
    if (n <= static_cast<size_t>(End() - pos_)) {
      std::memcpy(pos_, s, n);
      pos_ += n;
      return;
    }
    PutAcross(s, n);
  }
  // A piece across the end of the block: the block is filled, handed over
  // whole, and the rest goes to the next.
  void PutAcross(const char* s, size_t n) {
    while (n > 0) {
      const size_t k = std::min(Room(), n);
      std::memcpy(pos_, s, k);
      pos_ += k;
      s += k;
      n -= k;
    }
  }
  JsonStream& Serialized(const Json& value, bool pretty, unsigned indent_step,
                         unsigned current_indent) {
    scratch_.clear();
    serializer_.dump(value, pretty, false, indent_step, current_indent);
    Put(scratch_.data(), scratch_.size());
    return *this;
  }

  std::ostream& out_;
  std::unique_ptr<char[]> block_;  ///< kBlock bytes, filled up to pos_
  char* pos_;
  std::string scratch_;                            ///< serializer_'s output
  nlohmann::detail::serializer<Json> serializer_;  // writes into scratch_
};

}  // namespace gpuq::report
