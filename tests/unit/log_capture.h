// What the agent's logger wrote while a test ran: every line, from any
// thread, until the capture goes out of scope (then the logger is silenced
// for the process's later tests).
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/log.h"

namespace gpuq {

class LogCapture {
 public:
  LogCapture() {
    Log().SetSink([this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.push_back(line);
    });
  }
  ~LogCapture() {
    Log().SetSink([](const std::string&) {});
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  /// Every line so far, without newlines ("gpuq-agent: warn: ...").
  std::vector<std::string> Lines() const {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }
  /// Whether any line so far contains `text`.
  bool Said(std::string_view text) const {
    std::lock_guard<std::mutex> lock(mu_);
    for (const std::string& line : lines_) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

}  // namespace gpuq
