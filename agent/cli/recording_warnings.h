// What `record` warns about once its capture is closed, besides "wrote N
// records": events its source lost before they reached the capture, records
// the writer left out, and a --container filter that matched nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/snapshot.h"

namespace gpuq {

struct RecordingEnd {
  const Snapshot& at_end;          ///< the snapshot the drops record took
  uint64_t left_out = 0;           ///< CaptureWriter::Skipped()
  std::string container;           ///< --container, "" for none
  uint64_t container_records = 0;  ///< records the filter kept
};

/// One line per warning, in the order `record` logs them; none for a
/// capture that holds everything it saw.
std::vector<std::string> RecordingWarnings(const RecordingEnd& end);

}  // namespace gpuq
