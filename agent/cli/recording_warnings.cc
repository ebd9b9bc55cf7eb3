#include "cli/recording_warnings.h"

#include <fmt/format.h>

#include "export/collector.h"

namespace gpuq {

std::vector<std::string> RecordingWarnings(const RecordingEnd& end) {
  std::vector<std::string> warnings;
  std::string lost;
  for (const auto& [reason, n] : SourceDroppedEvents(end.at_end)) {
    if (n > 0)
      lost += fmt::format("{}{}={}", lost.empty() ? "" : ", ", reason, n);
  }
  if (!lost.empty()) {
    // The capture's counts are short by them; its last record says so, and
    // report and --replay count them as gpuq_events_dropped_total did.
    warnings.push_back(
        fmt::format("events lost before they reached the capture: {} "
                    "(gpuq_events_dropped_total); its counts are short by them",
                    lost));
  }
  if (end.left_out > 0) {
    // Over a type's size limits, the reader would refuse the whole file.
    warnings.push_back(
        fmt::format("left out {} record{} that would not read back",
                    end.left_out, end.left_out == 1 ? "" : "s"));
  }
  if (!end.container.empty() && end.container_records == 0) {
    warnings.push_back(
        fmt::format("no records of container {} (the capture has the GPU "
                    "topology only; check the name with gpuq-agent --once)",
                    end.container));
  }
  return warnings;
}

}  // namespace gpuq
