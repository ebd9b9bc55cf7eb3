// Snapshot -> Prometheus metric families: the metric contract in one place.
// /metrics (MetricsServer) and --once (once_render.h) render the same
// snapshot with the label values defined here, so the two cannot disagree.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/pipeline.h"

namespace gpuq {

/// Label value of a queue type ("compute", "sdma", ..., "type_<n>").
std::string QueueTypeLabel(uint32_t queue_type);
/// Label value of a destroy reason ("ioctl", "process_exit", "unknown").
std::string DestroyReasonLabel(uint32_t reason);
/// "hws" or "mes".
std::string SchedulerLabel(Scheduler scheduler);
/// kfd_unmap_queues_filter as a label ("all_queues", "dynamic_queues",
/// "by_pasid"; "queue" for an MES removal).
std::string UnmapFilterLabel(uint32_t filter);
/// gpuq_runlist_cause as a label ("create", ..., "unknown").
std::string RunlistCauseLabel(uint32_t cause);
/// gpuq_eviction_trigger as a label ("svm", "userptr", "ttm", ...).
std::string EvictionTriggerLabel(uint32_t trigger);
/// gpuq_packet_class as the labels of gpuq_doorbell_packets_total: what
/// the packet is (packet_type: "kernel_dispatch", "barrier", "other",
/// "unreadable") and the layout it came in (format: "hsa", the HSA packet
/// type's own; "amd_ext", AMD's extended kernel dispatch of gfx1250; "any"
/// for the other packets; "unknown" for unreadable ones).
struct PacketClassLabels {
  const char* packet_type;
  const char* format;
};
PacketClassLabels PacketClassLabelsOf(uint32_t packet_class);
/// "gfx942" from a KFD gfx_target_version (90402).
std::string GfxName(uint32_t gfx_target_version);
/// errno name of a (negative) errno ("ETIME"; "errno_<n>" if unnamed).
std::string ErrnoLabel(int32_t error);
/// The `reason` label values of gpuq_events_dropped_total that are lost
/// before the model (in the kernel, the ring buffer, decoding, the doorbell
/// map; a capture's gpuq_source_drops_record) and their counts.
std::vector<std::pair<const char*, uint64_t>> SourceDroppedEvents(
    const Snapshot& snapshot);
/// The `reason` label values of gpuq_events_dropped_total and their counts.
std::vector<std::pair<const char*, uint64_t>> DroppedEvents(
    const Snapshot& snapshot);

/// Builds every gpuq metric family from a snapshot, families and series in
/// a stable order. Series whose labels coincide (two cgroups of one
/// container) are summed.
std::vector<prometheus::MetricFamily> BuildFamilies(const Snapshot& snapshot);

/// The prometheus-cpp seam: a scrape takes a fresh snapshot of the pipeline.
/// Thread-safety: Collect() may run on any thread (Pipeline locks).
class PipelineCollectable : public prometheus::Collectable {
 public:
  explicit PipelineCollectable(Pipeline* pipeline) : pipeline_(pipeline) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  Pipeline* pipeline_;
};

}  // namespace gpuq
