// Whether an HWS GPU's scheduler is oversubscribed, and why: amdkfd builds
// a chained runlist, which the HWS firmware time-slices, when it holds more
// than the scheduler can map at once (pm_calc_rlib_size,
// kfd_packet_manager.c, the same tests from 6.1 to 6.12): more processes than
// max(1, max_proc_per_quantum) (module parameter hws_max_conc_proc, bounded
// by the VMIDs KFD owns), more active compute queues than the CP queue slots
// KFD owns (get_cp_queues_num), more than one GWS queue, or (6.16+, GPUs that
// chain on it) processes with conflicting XNACK modes.
//
// The verdict is the kernel's own (packet_manager.is_over_subscription, read
// at the map's return, GPUQ_RUNLIST_F_OVERSUBSCRIBED); the reasons are the
// counts against the limits read beside it, and the XNACK modes of the
// runlist's processes (GPUQ_RUNLIST_F_XNACK_CONFLICT, read where the kernel
// makes that test). A verdict nothing read explains is reason "other".
#pragma once

#include <gpuq/abi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace gpuq {

enum class OversubscriptionReason : uint8_t {
  kProcesses,
  kComputeQueues,
  kGwsQueues,
  kXnackConflict,
  kOther,
};
inline constexpr size_t kOversubscriptionReasons = 5;
/// "processes", "compute_queues", "gws_queues", "xnack_conflict", "other":
/// the `reason` label.
const char* OversubscriptionReasonLabel(OversubscriptionReason reason);

/// What a runlist holds against its limit: the `kind` label of
/// gpuq_runlist_entries and gpuq_runlist_entry_limit.
enum class RunlistEntryKind : uint8_t {
  kProcesses,
  kComputeQueues,
  kGwsQueues
};
inline constexpr size_t kRunlistEntryKinds = 3;
/// "processes", "compute_queues", "gws_queues".
const char* RunlistEntryKindLabel(RunlistEntryKind kind);

// ReasonsOf reads a count of kind k as reason k.
static_assert(static_cast<size_t>(OversubscriptionReason::kProcesses) ==
              static_cast<size_t>(RunlistEntryKind::kProcesses));
static_assert(static_cast<size_t>(OversubscriptionReason::kComputeQueues) ==
              static_cast<size_t>(RunlistEntryKind::kComputeQueues));
static_assert(static_cast<size_t>(OversubscriptionReason::kGwsQueues) ==
              static_cast<size_t>(RunlistEntryKind::kGwsQueues));

/// An HWS GPU's runlist as the last map that read it left it.
struct RunlistShape {
  bool oversubscribed = false;
  /// Its processes mix XNACK modes on a GPU that chains on that (6.16+).
  bool xnack_conflict = false;
  std::array<uint32_t, kRunlistEntryKinds> entries{};
  /// 0: not read (a layout the agent does not know); GWS's is always 1.
  std::array<uint32_t, kRunlistEntryKinds> limits{};
};

/// One HWS GPU's oversubscription, for /metrics and the report.
struct OversubscriptionSeries {
  RunlistShape shape;
  /// Maps that built an oversubscribed runlist, under each reason that held
  /// (a map with two reasons counts under both).
  std::array<uint64_t, kOversubscriptionReasons> maps_by_reason{};
  /// Maps that built an oversubscribed runlist, once each.
  uint64_t oversubscribed_maps = 0;
  /// Closed windows: from the map that built an oversubscribed runlist to
  /// the unmap that took it off the GPU.
  uint64_t oversubscribed_ns = 0;
  /// The open window's start (0: none open).
  uint64_t open_since_ns = 0;
  /// The runlist the open window's map built (why it is oversubscribed).
  RunlistShape open_shape;
};

/// The reasons of an oversubscribed `shape`, as pm_calc_rlib_size tests
/// them; {kOther} when none of its counts exceeds a limit it read and its
/// processes' XNACK modes do not conflict.
std::array<bool, kOversubscriptionReasons> ReasonsOf(const RunlistShape& shape);

/// Why `shape` is oversubscribed, each reason with its count and limit:
/// "compute_queues 24/18", "processes 3/2, gws_queues 2/1", "xnack_conflict";
/// "other" when nothing read explains the kernel's verdict (top, the
/// report's timeline).
std::string OversubscribedBecause(const RunlistShape& shape);

/// Receives each oversubscribed window as it closes: the GPU, from the map
/// that built the runlist to the unmap (or map) that replaced it, and that
/// runlist (the report's timeline).
using OversubscriptionWindowSink =
    std::function<void(uint32_t gpu_id, uint64_t start_ns, uint64_t end_ns,
                       const RunlistShape& shape)>;

/// Follows HWS maps and unmaps (GPUQ_EV_RUNLIST records of op MAP or UNMAP)
/// into `series`, keyed by gpu id; `sink` (may be empty) gets each window
/// as it closes. A map without the runlist read (the args-kprobe tier,
/// older captures) leaves the GPU's series as it was.
void OnRunlistForOversubscription(
    const gpuq_runlist_event& e,
    std::map<uint32_t, OversubscriptionSeries>* series,
    const OversubscriptionWindowSink& sink = {});

}  // namespace gpuq
