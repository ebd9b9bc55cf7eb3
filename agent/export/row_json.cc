#include "export/row_json.h"

#include <gpuq/abi.h>

#include "export/collector.h"
#include "model/unsampled.h"

namespace gpuq {
namespace {

using Json = nlohmann::ordered_json;

// Destroys by reason label, as gpuq_queue_destroys_total has them: none for
// a row without queue series, and "unknown" only once it counted.
Json DestroysByReason(const RowTotals& row) {
  Json out = Json::object();
  if (row.live_by_type.empty()) return out;
  for (uint32_t reason = 0; reason < GPUQ_DESTROY__MAX; ++reason) {
    if (row.destroys[reason] == 0 && reason == GPUQ_DESTROY_UNKNOWN) continue;
    out[DestroyReasonLabel(reason)] = row.destroys[reason];
  }
  return out;
}

// Unsampled queues by reason label, as gpuq_unsampled_queues has them (only
// the reasons it has a series for).
Json UnsampledByReason(const RowTotals& row) {
  Json out = Json::object();
  for (size_t why = 0; why < row.unsampled.size(); ++why) {
    if (row.unsampled[why] == 0) continue;
    out[UnsampledReasonLabel(static_cast<UnsampledReason>(why))] =
        row.unsampled[why];
  }
  return out;
}

Json Breakdown(RowBreakdown breakdown, const RowTotals& row) {
  switch (breakdown) {
    case RowBreakdown::kDestroyReason:
      return DestroysByReason(row);
    case RowBreakdown::kUnsampledReason:
      return UnsampledByReason(row);
    case RowBreakdown::kPreemptedCausedBy:
      // gpuq_queue_preemptions_total's caused_by values.
      return Json{{"self", row.preempted_by_self},
                  {"other", row.preempted_by_others}};
    case RowBreakdown::kNone:
      break;
  }
  return Json();
}

}  // namespace

Json RowColumnJson(const RowColumn& c, const RowTotals& row) {
  if (c.breakdown != RowBreakdown::kNone) return Breakdown(c.breakdown, row);
  if (c.count != nullptr) return c.count(row);
  if (c.real != nullptr) {
    const std::optional<double> real = c.real(row);
    return real ? Json(*real) : Json();
  }
  return c.text(row);
}

Json RowJson(const RowTotals& row) {
  Json queues = Json::object();
  for (const auto& [type, n] : row.live_by_type) {
    queues[QueueTypeLabel(type)] =
        queues.value(QueueTypeLabel(type), uint64_t{0}) + n;
  }
  Json out = {{"queues", std::move(queues)}};
  for (const RowColumn& c : RowColumns()) out[c.key] = RowColumnJson(c, row);
  return out;
}

}  // namespace gpuq
