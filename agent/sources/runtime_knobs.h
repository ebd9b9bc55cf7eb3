// The runtime knobs of a process (include/gpuq/abi.h's GPUQ_RUNTIME_KNOBS
// and gpuq_process_knobs_record): picked out of its environment by name,
// and told as one label ("GPU_MAX_HW_QUEUES=1 HSA_ENABLE_SDMA=0").
#pragma once

#include <gpuq/abi.h>

#include <cstddef>
#include <optional>
#include <string>

namespace gpuq {

/// The variable of knob slot `knob` ("GPU_MAX_HW_QUEUES"), "" past the list.
const char* RuntimeKnobName(size_t knob);

/// Picks the knobs out of an environment as /proc/PID/environ holds it
/// (NAME=VALUE entries, each ended by a NUL), fed in pieces of any size.
/// Memory stays bounded whatever the environment's size, and no variable
/// outside the knob list is kept. A name that appears twice counts once,
/// the first (what getenv() returns).
/// Thread-safety: a plain value.
class RuntimeKnobsParser {
 public:
  void Feed(const char* data, size_t n);
  /// The knobs found (set, cut, values; hdr zero). An entry the input
  /// ends in without a NUL counts as ended.
  gpuq_process_knobs_record Finish();

 private:
  void EndEntry();

  std::string entry_;  ///< the entry being read, at most kKeep bytes of it
  bool entry_long_ = false;
  gpuq_process_knobs_record out_{};
};

/// The knobs of `r` set, in slot order, as "NAME=VALUE" joined by spaces
/// ("" when none): bytes outside printable ASCII read '?', a cut value
/// ends in "...".
std::string RuntimeKnobsLabel(const gpuq_process_knobs_record& r);

/// A process's knobs label as tables show it: "-" when its environment was
/// not read, "none" when it set none, else the label.
std::string RuntimeKnobsText(const std::optional<std::string>& label);

}  // namespace gpuq
