// --once output: a pipeline snapshot as a table for people, JSON for
// scripts, or the exposition text /metrics would serve. The table and the
// JSON's containers and processes read the snapshot's typed series (with
// the collector's labels), not metric families by name.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/snapshot.h"

namespace gpuq {

/// kTable fits 120 columns: the (container, GPU) rows show the columns of
/// the queue questions; kWide shows every column.
enum class OnceFormat { kTable, kWide, kJson, kPrometheus };

/// Every format by its --output name, in the order --help lists them.
const std::vector<std::pair<std::string, OnceFormat>>& OnceFormats();

/// Parses a name of OnceFormats().
std::optional<OnceFormat> ParseOnceFormat(const std::string& name);

/// The "schema" member that opens the JSON: a reader can tell which layout
/// it holds (the report's is report/render_json.h's kReportSchema).
inline constexpr const char* kOnceSchema = "gpuq-once/1";

/// Renders `snapshot` (from Pipeline::TakeSnapshot) in `format`; JSON's
/// "metrics" and the exposition text are BuildFamilies(snapshot).
std::string RenderOnce(const Snapshot& snapshot, OnceFormat format);

}  // namespace gpuq
