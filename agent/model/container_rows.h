// The rows `--once`, `top` and `report` show: the model's per-container
// series summed per (cgroup, GPU) in one place, with one rule per column
// (queue columns: model/queue_column.h) and one name for host processes.
// A family that should appear in every view gets a field here once.
#pragma once

#include <gpuq/abi.h>

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "model/queue_cu_mask.h"
#include "model/queue_priority.h"
#include "model/snapshot.h"
#include "model/unsampled.h"
#include "resolver/gpu_topology.h"

namespace gpuq {

/// What every view shows for processes outside any container (the
/// `container` label is "" on their series).
inline constexpr const char* kHostContainer = "(host)";
/// `container`, or kHostContainer for "".
std::string ContainerOrHost(const std::string& container);

/// One row's figures: gauges as the snapshot holds them, counters since the
/// series began.
struct RowTotals {
  std::map<uint32_t, uint64_t> live_by_type;  ///< gpuq_queue_type -> live
  uint64_t compute = 0;                       ///< live queues by QueueColumnOf
  uint64_t sdma = 0;                          ///< every SDMA engine kind
  uint64_t other = 0;
  uint64_t processes = 0;  ///< processes holding queues
  /// Live queues at amdkfd's high pipe priority (queue priority 11-15).
  uint64_t high_priority = 0;
  /// Live queues a CU mask fences to a subset of the GPU's CUs.
  uint64_t cu_restricted = 0;
  uint64_t creates = 0;
  std::array<uint64_t, GPUQ_DESTROY__MAX> destroys{};  ///< by reason
  uint64_t submissions = 0;                            ///< AQL packets written
  uint64_t pending = 0;  ///< written minus consumed, sampled queues
  /// Live compute queues whose submissions are not counted, by
  /// UnsampledReason (gpuq_unsampled_queues).
  std::array<uint64_t, kUnsampledReasons> unsampled{};
  uint64_t unmaps_caused = 0;  ///< runlist unmaps its operations caused
  /// Times its queues were taken off the GPU by its own operations and by
  /// others', and the time they were off (credited when they are back).
  uint64_t preempted_by_self = 0;
  uint64_t preempted_by_others = 0;
  uint64_t off_ns = 0;
  uint64_t evictions = 0;
  /// Live queues of processes evicted there and not restored yet.
  uint64_t queues_evicted = 0;
  /// AQL packets per second between its processes' last two samples;
  /// nullopt where none has two.
  std::optional<double> submission_rate;

  uint64_t Live() const { return compute + sdma + other; }
  uint64_t Unsampled() const;
  uint64_t Preempted() const { return preempted_by_self + preempted_by_others; }
  double OffSeconds() const { return static_cast<double>(off_ns) / 1e9; }
  RowTotals& operator+=(const RowTotals& o);
};

/// The classes RowTotals::high_priority and cu_restricted count.
inline bool CountsAsHighPriority(PriorityClass c) {
  return c == PriorityClass::kHigh;
}
inline bool CountsAsCuRestricted(CuMaskClass c) {
  return c == CuMaskClass::kRestricted;
}

/// A cgroup on a GPU: the key every per-container series carries.
using CgroupGpu = std::pair<uint64_t, uint32_t>;

/// Every per-(cgroup, GPU) series of `s` summed into rows (a cgroup with
/// any of them has a row on that GPU).
std::map<CgroupGpu, RowTotals> RowsByCgroupGpu(const Snapshot& s);

/// A container on a GPU, by the labels its series carry.
struct ContainerGpu {
  std::string container;  ///< "" for host processes
  std::string pod;
  std::string ns;
  uint32_t gpu_id = 0;
  bool operator<(const ContainerGpu& o) const {
    return std::tie(container, pod, ns, gpu_id) <
           std::tie(o.container, o.pod, o.ns, o.gpu_id);
  }
};

/// A cell's figures by a label of its metric, for JSON (export/row_json.h
/// names them with the collector's label values).
enum class RowBreakdown : uint8_t {
  kNone,
  kDestroyReason,     ///< gpuq_queue_destroys_total's `reason`
  kUnsampledReason,   ///< gpuq_unsampled_queues' `reason`
  kPreemptedCausedBy  ///< gpuq_queue_preemptions_total's `caused_by`
};

/// A column of the (container, GPU) rows. `--once --output wide` and the
/// report's queues at the end show every one after the row's labels and
/// GPU, in this order; `--once`'s default table those its 120 columns hold
/// (export/once_render.cc names them); `top` those with a top width, after
/// its own columns; and `--once --output json` and the report's JSON one
/// member each. A family every view shows gets a RowTotals field (summed
/// above) and an entry here.
struct RowColumn {
  const char* header;  ///< `--once`'s and the report's text: "UNSAMPLED"
  const char* key;     ///< the JSON member and the report's HTML header
  /// `--once`'s legend for the column ("" for one that needs none).
  const char* help;
  std::string (*text)(const RowTotals&);
  /// The JSON value: the breakdown's object, else `count`'s, else `real`'s
  /// (null when none), else the text.
  uint64_t (*count)(const RowTotals&) = nullptr;
  std::optional<double> (*real)(const RowTotals&) = nullptr;
  RowBreakdown breakdown = RowBreakdown::kNone;
  size_t top_width = 0;   ///< 0: not in `top`
  int top_drop_rank = 0;  ///< `top` drops higher ranks first when narrow
};
const std::vector<RowColumn>& RowColumns();
/// The seconds off the GPU as every view prints them: "12.784".
std::string OffSecondsCell(const RowTotals& t);

/// RowsByCgroupGpu summed by labels: cgroups whose labels coincide (a
/// container's nested cgroups, folded containers) share a row, as their
/// series do in /metrics.
std::map<ContainerGpu, RowTotals> ContainerGpuRows(const Snapshot& s);

/// ContainerGpuRows summed per physical GPU: the key's gpu_id is the
/// physical GPU's index (`physical`: PhysicalGpus of the snapshot's
/// topology), and `processes` counts a process with queues on several of
/// its partitions once. GPUs the topology does not know are left out.
std::map<ContainerGpu, RowTotals> ContainerPhysicalGpuRows(
    const Snapshot& s, const std::vector<PhysicalGpu>& physical_gpus);

/// Every (cgroup, GPU) row summed per physical GPU, by its index
/// (`physical`: PhysicalGpus of the snapshot's topology): a partitioned GPU's
/// partitions add up, and `processes` counts a process with queues on
/// several of them once. GPUs the topology does not know are left out.
std::map<uint32_t, RowTotals> PhysicalGpuRows(
    const Snapshot& s, const std::vector<PhysicalGpu>& physical_gpus);

}  // namespace gpuq
