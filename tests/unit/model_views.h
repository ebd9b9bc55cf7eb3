// A Model as the tests read it: through the paths the product reads, its
// exported series (Model::Series) and reconciliation's inventory (Diff
// against an empty sysfs lists every live queue with its process key), not
// through accessors of the model's own tables.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "model/model.h"

namespace gpuq {

/// Every live queue of `m`.
inline std::vector<QueueState> LiveQueues(const Model& m) {
  return m.Diff({}).missing_in_sysfs;
}

/// The ids of the live queues held under `process_key` (a kfd_process, or
/// SeededProcessKey for a process seeded from sysfs).
inline std::set<uint32_t> QueueIdsOf(const Model& m, uint64_t process_key) {
  std::set<uint32_t> ids;
  for (const QueueState& q : LiveQueues(m)) {
    if (q.process_key == process_key) ids.insert(q.queue_id);
  }
  return ids;
}

/// The process rows of `m`'s series: one per process holding queues.
inline std::vector<ProcessRow> ProcessRows(const Model& m) {
  return m.Series().process_rows;
}

/// The row of process `pid`; none if it holds no queue.
inline std::optional<ProcessRow> ProcessRowOf(const Model& m, uint32_t pid) {
  for (ProcessRow& row : ProcessRows(m)) {
    if (row.pid == pid) return row;
  }
  return std::nullopt;
}

}  // namespace gpuq
