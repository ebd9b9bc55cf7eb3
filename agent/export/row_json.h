// The (container, GPU) rows as JSON: what `--once --output json` writes per
// GPU and the report's queues at the end per row, one member per column of
// model/container_rows.h, its figures named by the collector's labels.
#pragma once

#include <nlohmann/json.hpp>

#include "model/container_rows.h"

namespace gpuq {

/// Column `c` of `row`: its breakdown as an object by label value, else its
/// count, else its real value (null when none), else its text.
nlohmann::ordered_json RowColumnJson(const RowColumn& c, const RowTotals& row);

/// `queues` (its live queues by queue type label, as gpuq_queues has them),
/// then every column of `row` by its key.
nlohmann::ordered_json RowJson(const RowTotals& row);

}  // namespace gpuq
