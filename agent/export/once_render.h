// --once output: a pipeline snapshot as a table for people, JSON for
// scripts, or the exposition text /metrics would serve. The table and the
// JSON's containers and processes read the snapshot's typed series (with
// the collector's labels), not metric families by name.
#pragma once

#include <optional>
#include <string>

#include "model/snapshot.h"

namespace gpuq {

enum class OnceFormat { kTable, kJson, kPrometheus };

/// Parses "table", "json" or "prometheus".
std::optional<OnceFormat> ParseOnceFormat(const std::string& name);

/// Renders `snapshot` (from Pipeline::TakeSnapshot) in `format`; JSON's
/// "metrics" and the exposition text are BuildFamilies(snapshot).
std::string RenderOnce(const Snapshot& snapshot, OnceFormat format);

}  // namespace gpuq
