// What every export reads: the model's series and what the pipeline adds to
// them (attribution, labels, probes, drops), copied out under the pipeline's
// lock by Pipeline::TakeSnapshot.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "loader/probe_status.h"
#include "loader/queue_priority_applied.h"
#include "model/container_labeling.h"
#include "model/model.h"
#include "model/reconciler.h"
#include "resolver/attributor.h"
#include "resolver/learned_cgroups.h"
#include "sources/event_source.h"

namespace gpuq {

/// One container with series of its own: the ids behind its labels.
struct ContainerRow {
  SeriesLabels labels;
  std::string container_id;
  std::string name;  ///< runtime name, "" if unknown
  std::string runtime;
  std::string pod_uid;
};

/// Everything an export needs, copied out under the pipeline's lock: the
/// model's series (ModelSeries, one copy; its fields read as the snapshot's
/// own) plus what the pipeline adds to them.
struct Snapshot : ModelSeries {
  std::string source;  ///< "bpf", "replay", "fake", "sysfs"
  std::vector<ProbeStatus> probes;
  /// Attribution of the cgroup of every per-cgroup series
  /// (ModelSeries::ForEachCgroup).
  std::unordered_map<uint64_t, Attribution> attributions;
  /// Labels of every cgroup in `attributions`. Exports read these (through
  /// LabelsOf), never `attributions`: a hand-built snapshot sets them.
  std::unordered_map<uint64_t, SeriesLabels> labels;
  /// Label names of allowlisted runtime labels ("label_<sanitized>").
  std::vector<std::string> extra_label_names;
  std::vector<ContainerRow> containers;
  uint64_t containers_folded = 0;
  bool pid_comm_labels = false;
  /// (cgroup, tgid) -> activity; comm for the pid/comm labels (filled only
  /// with pid_comm_labels).
  std::map<std::pair<uint64_t, uint32_t>, OwnerActivity> owners;
  std::map<std::string, uint64_t> runtime_errors;  ///< by runtime client
  /// Containers the metadata resolver forgot at its capacity (live, with
  /// runtime lookups).
  std::optional<uint64_t> metadata_evicted;
  SourceDrops source_drops;
  uint64_t doorbell_map_full = 0;  ///< see Pipeline::SetDoorbellMapFull
  bool reconcile_enabled = false;
  ReconcileStats reconcile;
  uint64_t cgroups_unresolved = 0;
  /// The cgroup watcher's memory (live mode with the watcher running).
  std::optional<LearnedCgroupStats> learned_cgroups;
  /// Whether the running kernel applies queue priorities (live mode).
  std::optional<QueuePriorityFact> queue_priority;

  /// The labels of `cgroup_id`'s series; container kUnresolvedContainer for
  /// a cgroup the snapshot does not label.
  const SeriesLabels& LabelsOf(uint64_t cgroup_id) const;
};

/// Labels every attributed cgroup of `s` and lists its containers (one row
/// per container with series of its own, unfolded).
void LabelSnapshot(Snapshot* s, ContainerLabeling* labeling);

}  // namespace gpuq
