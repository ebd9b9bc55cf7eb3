#include "sources/runtime_knobs.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>

namespace gpuq {
namespace {

#define GPUQ_KNOB_NAME(name, slot) #name,
constexpr std::array<const char*, GPUQ_KNOB__MAX> kKnobNames = {
    GPUQ_RUNTIME_KNOBS(GPUQ_KNOB_NAME)};
#undef GPUQ_KNOB_NAME

constexpr size_t LongestName() {
  size_t n = 0;
  for (const char* name : kKnobNames) {
    n = std::max(n, std::string_view(name).size());
  }
  return n;
}
// Enough of an entry to know its name and whether its value is cut: the
// longest knob's name, '=', and one byte more than a value holds.
constexpr size_t kKeep = LongestName() + 1 + GPUQ_KNOB_VALUE_LEN;

}  // namespace

const char* RuntimeKnobName(size_t knob) {
  return knob < kKnobNames.size() ? kKnobNames[knob] : "";
}

void RuntimeKnobsParser::Feed(const char* data, size_t n) {
  while (n > 0) {
    const char* nul = static_cast<const char*>(std::memchr(data, '\0', n));
    const size_t piece = nul != nullptr ? static_cast<size_t>(nul - data) : n;
    const size_t room = kKeep - entry_.size();
    entry_.append(data, std::min(piece, room));
    if (piece > room) entry_long_ = true;
    if (nul == nullptr) return;
    EndEntry();
    data += piece + 1;
    n -= piece + 1;
  }
}

void RuntimeKnobsParser::EndEntry() {
  const size_t eq = entry_.find('=');
  if (eq != std::string::npos) {
    const std::string_view name(entry_.data(), eq);
    for (size_t k = 0; k < kKnobNames.size(); ++k) {
      if (name != kKnobNames[k] || (out_.set & (1u << k)) != 0) continue;
      const std::string_view value(entry_.data() + eq + 1,
                                   entry_.size() - eq - 1);
      const size_t kept =
          std::min(value.size(), size_t{GPUQ_KNOB_VALUE_LEN - 1});
      std::memcpy(out_.values[k], value.data(), kept);
      out_.set |= 1u << k;
      if (kept < value.size() || entry_long_) out_.cut |= 1u << k;
      break;
    }
  }
  entry_.clear();
  entry_long_ = false;
}

gpuq_process_knobs_record RuntimeKnobsParser::Finish() {
  if (!entry_.empty()) EndEntry();
  gpuq_process_knobs_record out = out_;
  out_ = {};
  return out;
}

std::string RuntimeKnobsLabel(const gpuq_process_knobs_record& r) {
  std::string out;
  for (size_t k = 0; k < GPUQ_KNOB__MAX; ++k) {
    if ((r.set & (1u << k)) == 0) continue;
    if (!out.empty()) out += ' ';
    out += kKnobNames[k];
    out += '=';
    const char* v = r.values[k];
    for (size_t i = 0; i < GPUQ_KNOB_VALUE_LEN && v[i] != '\0'; ++i) {
      const bool printable = v[i] > ' ' && v[i] < 0x7f;
      out += printable ? v[i] : '?';
    }
    if ((r.cut & (1u << k)) != 0) out += "...";
  }
  return out;
}

std::string RuntimeKnobsText(const std::optional<std::string>& label) {
  if (!label) return "-";
  return label->empty() ? "none" : *label;
}

}  // namespace gpuq
