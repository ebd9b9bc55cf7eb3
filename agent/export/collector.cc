#include "export/collector.h"

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <utility>

namespace gpuq {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<std::pair<std::string, std::string>>;

/// Accumulates one family's series by label set, in label order.
class FamilyBuilder {
 public:
  FamilyBuilder(std::string name, std::string help, MetricType type)
      : name_(std::move(name)), help_(std::move(help)), type_(type) {}

  void Add(const Labels& labels, double value) { series_[labels] += value; }
  /// Sets the series, for info metrics: 1 however many cgroups share it.
  void Set(const Labels& labels, double value) { series_[labels] = value; }

  MetricFamily Build() const {
    MetricFamily family{name_, help_, type_, {}};
    for (const auto& [labels, value] : series_) {
      ClientMetric metric;
      for (const auto& [name, label_value] : labels) {
        metric.label.push_back({name, label_value});
      }
      if (type_ == MetricType::Counter) {
        metric.counter.value = value;
      } else {
        metric.gauge.value = value;
      }
      family.metric.push_back(std::move(metric));
    }
    return family;
  }

 private:
  std::string name_;
  std::string help_;
  MetricType type_;
  std::map<Labels, double> series_;
};

/// Accumulates one histogram family's series by label set.
class HistogramBuilder {
 public:
  HistogramBuilder(std::string name, std::string help,
                   const std::vector<double>& bounds)
      : name_(std::move(name)), help_(std::move(help)), bounds_(bounds) {}

  void Add(const Labels& labels, const DurationHistogram& h) {
    series_[labels].Merge(h);
  }

  MetricFamily Build() const {
    MetricFamily family{name_, help_, MetricType::Histogram, {}};
    for (const auto& [labels, h] : series_) {
      ClientMetric metric;
      for (const auto& [name, label_value] : labels) {
        metric.label.push_back({name, label_value});
      }
      metric.histogram.sample_count = h.count;
      metric.histogram.sample_sum = h.sum_seconds;
      uint64_t cumulative = 0;
      for (size_t i = 0; i < bounds_.size(); ++i) {
        cumulative += i < h.counts.size() ? h.counts[i] : 0;
        metric.histogram.bucket.push_back({cumulative, bounds_[i]});
      }
      family.metric.push_back(std::move(metric));
    }
    return family;
  }

 private:
  std::string name_;
  std::string help_;
  const std::vector<double>& bounds_;
  std::map<Labels, DurationHistogram> series_;
};

/// container, pod, namespace and the allowlisted runtime labels.
Labels LabelsOf(const Snapshot& s, const SeriesLabels& l) {
  Labels labels{
      {"container", l.container}, {"pod", l.pod}, {"namespace", l.ns}};
  for (size_t i = 0; i < s.extra_label_names.size(); ++i) {
    labels.emplace_back(s.extra_label_names[i],
                        i < l.extra.size() ? l.extra[i] : "");
  }
  return labels;
}

/// The per-container labels of a cgroup.
Labels ContainerLabels(const Snapshot& s, uint64_t cgroup_id) {
  return LabelsOf(s, s.LabelsOf(cgroup_id));
}

/// The per-process labels, with --labels.pid-comm.
Labels WithOwner(const Snapshot& s, Labels labels, uint64_t cgroup_id,
                 uint32_t tgid) {
  if (!s.pid_comm_labels) return labels;
  auto owner = s.owners.find({cgroup_id, tgid});
  labels.emplace_back("pid", tgid == 0 ? "" : std::to_string(tgid));
  labels.emplace_back("comm",
                      owner != s.owners.end() ? owner->second.comm : "");
  return labels;
}

Labels With(Labels labels, std::string name, std::string value) {
  labels.emplace_back(std::move(name), std::move(value));
  return labels;
}

void AddQueueFamilies(const Snapshot& s, std::vector<MetricFamily>* out) {
  FamilyBuilder queues("gpuq_queues", "Live hardware queues.",
                       MetricType::Gauge);
  FamilyBuilder creates("gpuq_queue_creates_total",
                        "Hardware queues created (seeded queues excluded).",
                        MetricType::Counter);
  FamilyBuilder destroys("gpuq_queue_destroys_total",
                         "Hardware queues destroyed, by reason.",
                         MetricType::Counter);
  for (const auto& [key, series] : s.queue_series) {
    const Labels labels =
        WithOwner(s,
                  With(With(ContainerLabels(s, key.cgroup_id), "gpu_id",
                            std::to_string(key.gpu_id)),
                       "queue_type", QueueTypeLabel(key.queue_type)),
                  key.cgroup_id, key.tgid);
    queues.Add(labels, static_cast<double>(series.live));
    creates.Add(labels, static_cast<double>(series.creates));
    for (uint32_t reason = 0; reason < GPUQ_DESTROY__MAX; ++reason) {
      if (series.destroys[reason] == 0 && reason == GPUQ_DESTROY_UNKNOWN) {
        continue;
      }
      destroys.Add(With(labels, "reason", DestroyReasonLabel(reason)),
                   static_cast<double>(series.destroys[reason]));
    }
  }
  out->push_back(queues.Build());
  out->push_back(creates.Build());
  out->push_back(destroys.Build());

  FamilyBuilder processes("gpuq_processes",
                          "Processes holding hardware queues on a GPU.",
                          MetricType::Gauge);
  for (const auto& [key, n] : s.processes) {
    processes.Add(With(ContainerLabels(s, key.first), "gpu_id",
                       std::to_string(key.second)),
                  static_cast<double>(n));
  }
  out->push_back(processes.Build());

  FamilyBuilder exits("gpuq_process_exits_total",
                      "KFD processes whose address space went away.",
                      MetricType::Counter);
  for (const auto& [cgroup, n] : s.process_exits) {
    exits.Add(ContainerLabels(s, cgroup), static_cast<double>(n));
  }
  out->push_back(exits.Build());

  FamilyBuilder failures("gpuq_queue_create_failures_total",
                         "Queue create ioctls that failed, by errno.",
                         MetricType::Counter);
  for (const auto& [key, n] : s.create_failures) {
    // User space passes any gpu_id; only known ones become label values.
    const std::string gpu =
        s.gpus.count(key.gpu_id) != 0 ? std::to_string(key.gpu_id) : "unknown";
    failures.Add(With(With(ContainerLabels(s, key.cgroup_id), "gpu_id", gpu),
                      "error", ErrnoLabel(key.error)),
                 static_cast<double>(n));
  }
  out->push_back(failures.Build());
}

Labels GpuLabels(const Snapshot& s, uint64_t cgroup_id, uint32_t gpu_id) {
  return With(ContainerLabels(s, cgroup_id), "gpu_id", std::to_string(gpu_id));
}

void AddSubmissionFamilies(const Snapshot& s, std::vector<MetricFamily>* out) {
  FamilyBuilder submissions(
      "gpuq_submissions_total",
      "AQL packets written to hardware queues (write index deltas of "
      "sampled queues).",
      MetricType::Counter);
  for (const auto& [key, series] : s.queue_series) {
    // Only AQL (compute) queues are sampled; other types appear if counted.
    if (key.queue_type != GPUQ_QUEUE_COMPUTE && series.submissions == 0) {
      continue;
    }
    submissions.Add(With(GpuLabels(s, key.cgroup_id, key.gpu_id), "queue_type",
                         QueueTypeLabel(key.queue_type)),
                    static_cast<double>(series.submissions));
  }
  out->push_back(submissions.Build());

  FamilyBuilder pending("gpuq_queue_pending_packets",
                        "Packets written but not yet consumed by the GPU, "
                        "summed over sampled queues.",
                        MetricType::Gauge);
  for (const auto& [key, n] : s.pending_packets) {
    pending.Add(GpuLabels(s, key.first, key.second), static_cast<double>(n));
  }
  out->push_back(pending.Build());

  FamilyBuilder sampled("gpuq_sampled_queues",
                        "Live queues whose last index sample was readable.",
                        MetricType::Gauge);
  sampled.Add({}, static_cast<double>(s.sampled_queues));
  out->push_back(sampled.Build());

  FamilyBuilder unsampled(
      "gpuq_unsampled_queues",
      "Live compute queues whose submissions are not counted, by why: "
      "sysfs_only (found in sysfs, its create not seen: no ring addresses), "
      "not_rocr (not ROCr's amd_queue_t), unreadable (its last sample).",
      MetricType::Gauge);
  for (const auto& [key, n] : s.unsampled_queues) {
    const auto& [cgroup, gpu, why] = key;
    unsampled.Add(
        With(GpuLabels(s, cgroup, gpu), "reason", UnsampledReasonLabel(why)),
        static_cast<double>(n));
  }
  out->push_back(unsampled.Build());

  FamilyBuilder samples("gpuq_queue_samples_total",
                        "Queue index samples by result: ok, reset (write "
                        "index went backwards: new baseline), unreadable, "
                        "denied (no ptrace access to the owner), "
                        "unknown_queue.",
                        MetricType::Counter);
  const std::pair<const char*, uint64_t> results[] = {
      {"ok", s.sample_stats.ok},
      {"reset", s.sample_stats.reset},
      {"unreadable", s.sample_stats.unreadable},
      {"denied", s.sample_stats.denied},
      {"unknown_queue", s.sample_stats.unknown_queue},
  };
  for (const auto& [result, n] : results) {
    samples.Add({{"result", result}}, static_cast<double>(n));
  }
  out->push_back(samples.Build());

  FamilyBuilder doorbells(
      "gpuq_doorbells_total",
      "Doorbell rings (--doorbells=uprobe): stores, one per packet under "
      "HIP 5 and 6, one per batch of graph packets under HIP 7; "
      "gpu_id=\"unknown\" for doorbells of queues created before the agent "
      "started.",
      MetricType::Counter);
  FamilyBuilder packets(
      "gpuq_doorbell_packets_total",
      "AQL packets the doorbell rings published, by packet type and format "
      "(--doorbells=uprobe).",
      MetricType::Counter);
  FamilyBuilder barrier_dispatches(
      "gpuq_doorbell_barrier_dispatches_total",
      "Kernel dispatches the doorbell rings published with the header's "
      "barrier bit set: each waits for the packets before it on its queue, "
      "so streams sharing a hardware queue run one after the other "
      "(--doorbells=uprobe).",
      MetricType::Counter);
  for (const auto& [key, series] : s.doorbells) {
    const Labels labels =
        With(ContainerLabels(s, key.cgroup_id), "gpu_id",
             key.gpu_id == 0 ? "unknown" : std::to_string(key.gpu_id));
    doorbells.Add(labels, static_cast<double>(series.doorbells));
    for (uint32_t c = 0; c < GPUQ_PACKET__MAX; ++c) {
      const PacketClassLabels names = PacketClassLabelsOf(c);
      packets.Add(With(With(labels, "packet_type", names.packet_type), "format",
                       names.format),
                  static_cast<double>(series.by_packet[c]));
    }
    barrier_dispatches.Add(labels,
                           static_cast<double>(series.barrier_dispatches));
  }
  out->push_back(doorbells.Build());
  out->push_back(packets.Build());
  out->push_back(barrier_dispatches.Build());
}

// A container's labels on a GPU, with the scheduler that ran the operation.
Labels SchedulerGpuLabels(const Snapshot& s, uint64_t cgroup_id,
                          uint32_t gpu_id, Scheduler scheduler) {
  Labels labels = GpuLabels(s, cgroup_id, gpu_id);
  labels.emplace_back("scheduler", SchedulerLabel(scheduler));
  return labels;
}

void AddRunlistFamilies(const Snapshot& s, std::vector<MetricFamily>* out) {
  FamilyBuilder unmaps("gpuq_runlist_unmaps_total",
                       "Runlist preemptions (HWS unmap_queues_cpsch, MES "
                       "queue removal), by unmap filter.",
                       MetricType::Counter);
  HistogramBuilder unmap_duration(
      "gpuq_runlist_unmap_duration_seconds",
      "Time to preempt (unmap) the runlist or remove an MES queue.",
      RunlistBuckets());
  HistogramBuilder map_duration(
      "gpuq_runlist_map_duration_seconds",
      "Time to (re)map the runlist or add an MES queue.", RunlistBuckets());
  for (const auto& [key, series] : s.runlist) {
    const Labels gpu{{"gpu_id", std::to_string(key.gpu_id)},
                     {"scheduler", SchedulerLabel(key.scheduler)}};
    for (const auto& [filter, n] : series.unmaps_by_filter) {
      unmaps.Add(With(gpu, "filter", UnmapFilterLabel(filter)),
                 static_cast<double>(n));
    }
    if (series.unmap.count > 0) unmap_duration.Add(gpu, series.unmap);
    if (series.map.count > 0) map_duration.Add(gpu, series.map);
  }
  out->push_back(unmaps.Build());
  out->push_back(unmap_duration.Build());
  out->push_back(map_duration.Build());

  FamilyBuilder failures("gpuq_runlist_failures_total",
                         "Failed runlist operations by errno; ETIME on unmap: "
                         "the scheduler hung (preemption timeout).",
                         MetricType::Counter);
  for (const auto& [key, n] : s.runlist_failures) {
    failures.Add({{"gpu_id", std::to_string(key.gpu_id)},
                  {"scheduler", SchedulerLabel(key.scheduler)},
                  {"op", key.unmap ? "unmap" : "map"},
                  {"error", ErrnoLabel(key.error)}},
                 static_cast<double>(n));
  }
  out->push_back(failures.Build());

  FamilyBuilder causes("gpuq_runlist_operations_total",
                       "Runlist operations attributed to the process whose "
                       "queue create, destroy, eviction, restore, exit or "
                       "update caused them.",
                       MetricType::Counter);
  for (const auto& [key, n] : s.runlist_causes) {
    Labels labels =
        SchedulerGpuLabels(s, key.cgroup_id, key.gpu_id, key.scheduler);
    labels.emplace_back("op", key.unmap ? "unmap" : "map");
    labels.emplace_back("cause", RunlistCauseLabel(key.cause));
    causes.Add(labels, static_cast<double>(n));
  }
  out->push_back(causes.Build());

  FamilyBuilder preemptions(
      "gpuq_queue_preemptions_total",
      "Times a container's active queues on a GPU were taken off it (HWS: an "
      "unmap of the mapped runlist; MES: a queue removed for its update), by "
      "the operation that did it and whether the container's own "
      "(caused_by=self) or another's (other).",
      MetricType::Counter);
  FamilyBuilder preempted(
      "gpuq_queue_preempted_seconds_total",
      "Seconds a container's queues were off the GPU after a preemption: "
      "from the unmap to the map that put them back (MES: the queue's "
      "re-add), counted when they are back.",
      MetricType::Counter);
  for (const auto& [key, series] : s.preemptions) {
    Labels labels =
        SchedulerGpuLabels(s, key.cgroup_id, key.gpu_id, key.scheduler);
    labels.emplace_back("cause", RunlistCauseLabel(key.cause));
    labels.emplace_back("caused_by", key.by_self ? "self" : "other");
    preemptions.Add(labels, static_cast<double>(series.preemptions));
    preempted.Add(labels, static_cast<double>(series.off_ns) / 1e9);
  }
  out->push_back(preemptions.Build());
  out->push_back(preempted.Build());
}

void AddOversubscriptionFamilies(const Snapshot& s,
                                 std::vector<MetricFamily>* out) {
  FamilyBuilder oversubscribed(
      "gpuq_runlist_oversubscribed",
      "1 when the runlist amdkfd last built for this HWS GPU is "
      "oversubscribed (more than its scheduler maps at once: HWS "
      "time-slices a chained runlist), else 0.",
      MetricType::Gauge);
  FamilyBuilder maps(
      "gpuq_runlist_oversubscribed_maps_total",
      "Runlists built oversubscribed, under each reason that held "
      "(processes, compute_queues, gws_queues beyond the limits amdkfd "
      "holds them to; other: a verdict no count explains, e.g. an XNACK "
      "conflict).",
      MetricType::Counter);
  FamilyBuilder seconds(
      "gpuq_runlist_oversubscribed_seconds_total",
      "Seconds an oversubscribed runlist was on the GPU, from its map to "
      "the unmap that took it off, counted at the unmap.",
      MetricType::Counter);
  FamilyBuilder entries(
      "gpuq_runlist_entries",
      "What the runlist amdkfd last built for this HWS GPU holds: "
      "processes, active compute queues, GWS queues.",
      MetricType::Gauge);
  FamilyBuilder limits(
      "gpuq_runlist_entry_limit",
      "What the scheduler maps at once: max(1, hws_max_conc_proc bounded "
      "by KFD's VMIDs) processes, the CP queue slots KFD owns, 1 GWS "
      "queue; absent where the agent could not read it.",
      MetricType::Gauge);
  for (const auto& [gpu_id, series] : s.oversubscription) {
    const Labels gpu{{"gpu_id", std::to_string(gpu_id)}};
    oversubscribed.Add(gpu, series.shape.oversubscribed ? 1.0 : 0.0);
    for (size_t r = 0; r < kOversubscriptionReasons; ++r) {
      maps.Add(With(gpu, "reason",
                    OversubscriptionReasonLabel(
                        static_cast<OversubscriptionReason>(r))),
               static_cast<double>(series.maps_by_reason[r]));
    }
    seconds.Add(gpu, static_cast<double>(series.oversubscribed_ns) / 1e9);
    for (size_t k = 0; k < kRunlistEntryKinds; ++k) {
      const Labels kind = With(
          gpu, "kind", RunlistEntryKindLabel(static_cast<RunlistEntryKind>(k)));
      entries.Add(kind, static_cast<double>(series.shape.entries[k]));
      if (series.shape.limits[k] != 0) {
        limits.Add(kind, static_cast<double>(series.shape.limits[k]));
      }
    }
  }
  out->push_back(oversubscribed.Build());
  out->push_back(maps.Build());
  out->push_back(seconds.Build());
  out->push_back(entries.Build());
  out->push_back(limits.Build());
}

void AddPriorityFamilies(const Snapshot& s, std::vector<MetricFamily>* out) {
  FamilyBuilder by_priority(
      "gpuq_queues_by_priority",
      "Live hardware queues by the CP pipe priority amdkfd gives their queue "
      "priority (0-6 low, 7-10 medium, 11-15 high) at create or their last "
      "update; unknown for queues found in sysfs at start and not updated.",
      MetricType::Gauge);
  for (const auto& [key, n] : s.queues_by_priority) {
    const auto& [cgroup, gpu, c] = key;
    by_priority.Add(
        With(GpuLabels(s, cgroup, gpu), "priority", PriorityClassLabel(c)),
        static_cast<double>(n));
  }
  out->push_back(by_priority.Build());
  FamilyBuilder by_requested(
      "gpuq_queues_by_requested_priority",
      "Live hardware queues by the queue priority their process asked for "
      "(AMDKFD_IOC_CREATE_QUEUE or its last UPDATE_QUEUE: 0-15; unknown for "
      "queues found in sysfs at start and not updated). Whether the kernel "
      "applies it, or only its pipe priority (gpuq_queues_by_priority): "
      "gpuq_kernel_queue_priority_info.",
      MetricType::Gauge);
  for (const auto& [key, n] : s.queues_by_requested_priority) {
    const auto& [cgroup, gpu, priority] = key;
    by_requested.Add(
        With(GpuLabels(s, cgroup, gpu), "requested_priority",
             priority >= kUnknownQueuePriority ? std::string("unknown")
                                               : std::to_string(priority)),
        static_cast<double>(n));
  }
  out->push_back(by_requested.Build());
  FamilyBuilder cu_masked(
      "gpuq_queues_cu_masked",
      "Live hardware queues given a CU mask (AMDKFD_IOC_SET_CU_MASK), by "
      "whether it leaves out any of the GPU's active CUs (restricted), "
      "enables them all (all_cus) or could not be judged (unknown); queues "
      "never given one run on every CU and are not counted.",
      MetricType::Gauge);
  for (const auto& [key, n] : s.queues_cu_masked) {
    const auto& [cgroup, gpu, c] = key;
    cu_masked.Add(
        With(GpuLabels(s, cgroup, gpu), "cu_mask", CuMaskClassLabel(c)),
        static_cast<double>(n));
  }
  out->push_back(cu_masked.Build());
}

void AddEvictionFamilies(const Snapshot& s, std::vector<MetricFamily>* out) {
  FamilyBuilder evictions("gpuq_evictions_total",
                          "Process queue evictions (queues taken off the GPU), "
                          "by trigger.",
                          MetricType::Counter);
  HistogramBuilder duration("gpuq_eviction_duration_seconds",
                            "Time from a process's eviction on a GPU to its "
                            "restore.",
                            EvictionBuckets());
  for (const auto& [key, series] : s.evictions) {
    const Labels labels = With(GpuLabels(s, key.cgroup_id, key.gpu_id),
                               "trigger", EvictionTriggerLabel(key.trigger));
    evictions.Add(labels, static_cast<double>(series.evictions));
    if (series.duration.count > 0) duration.Add(labels, series.duration);
  }
  out->push_back(evictions.Build());
  out->push_back(duration.Build());

  FamilyBuilder restores("gpuq_eviction_restores_total",
                         "Process queue restores after an eviction.",
                         MetricType::Counter);
  FamilyBuilder evicted("gpuq_evicted_processes",
                        "Processes evicted on a GPU and not restored yet.",
                        MetricType::Gauge);
  FamilyBuilder queues_evicted(
      "gpuq_queues_evicted",
      "Live queues of processes evicted on a GPU and not restored yet: off "
      "the GPU until the restore.",
      MetricType::Gauge);
  // Both gauges have a series on every row with evictions or restores, so a
  // restore takes them back to 0 rather than making them vanish.
  auto zero_gauges = [&](const Labels& labels) {
    evicted.Add(labels, 0);
    queues_evicted.Add(labels, 0);
  };
  for (const auto& [key, series] : s.evictions) {
    zero_gauges(GpuLabels(s, key.cgroup_id, key.gpu_id));
  }
  for (const auto& [key, n] : s.restores) {
    const Labels labels = GpuLabels(s, key.first, key.second);
    restores.Add(labels, static_cast<double>(n));
    zero_gauges(labels);
  }
  for (const auto& [key, n] : s.evicted) {
    evicted.Add(GpuLabels(s, key.first, key.second), static_cast<double>(n));
  }
  out->push_back(restores.Build());
  out->push_back(evicted.Build());
  for (const auto& [key, n] : s.queues_evicted) {
    queues_evicted.Add(GpuLabels(s, key.first, key.second),
                       static_cast<double>(n));
  }
  out->push_back(queues_evicted.Build());
}

void AddInfoFamilies(const Snapshot& s, std::vector<MetricFamily>* out) {
  FamilyBuilder containers(
      "gpuq_container_info",
      "Containers holding hardware queues: ids behind the container label.",
      MetricType::Gauge);
  auto info = [&](const Labels& labels, const std::string& id,
                  const std::string& name, const std::string& runtime,
                  const std::string& pod_uid) {
    containers.Set(
        With(With(With(With(labels, "container_id", id), "name", name),
                  "runtime", runtime),
             "pod_uid", pod_uid),
        1);
  };
  for (const ContainerRow& c : s.containers) {
    info(LabelsOf(s, c.labels), c.container_id, c.name, c.runtime, c.pod_uid);
  }
  out->push_back(containers.Build());

  FamilyBuilder gpus("gpuq_gpu_info",
                     "KFD GPU nodes; join key to other GPU exporters.",
                     MetricType::Gauge);
  // gpu_index and gpu_partition_id are what AMD's device-metrics-exporter
  // calls gpu_id and gpu_partition_id (amd-smi's numbering): the join key
  // (docs/metrics.md, "Joining AMD's exporter"). KFD's node is kfd_node, not
  // node: Kubernetes scrape configs put the node's name in `node`.
  // gpu_physical_index and gpu_physical_pci name the physical GPU a
  // partition is of (amd-smi's socket; AMD's exporter has no label for it),
  // to sum per physical GPU.
  const std::map<uint32_t, uint32_t> index = AmdSmiIndexes(s.gpus);
  const std::map<uint32_t, uint32_t> physical =
      PhysicalGpuIndexes(PhysicalGpus(s.gpus));
  for (const auto& [gpu_id, n] : s.gpus) {
    gpus.Add({{"gpu_id", std::to_string(gpu_id)},
              {"gpu_index", std::to_string(index.at(gpu_id))},
              {"gpu_partition_id", std::to_string(n.PartitionId())},
              {"gpu_physical_index", std::to_string(physical.at(gpu_id))},
              {"gpu_physical_pci", n.PhysicalPci()},
              {"kfd_node", std::to_string(n.node)},
              {"name", n.name},
              {"gfx", GfxName(n.gfx_target_version)},
              {"gfx_target_version", std::to_string(n.gfx_target_version)},
              {"pci", n.PciAddress()},
              {"unique_id", std::to_string(n.unique_id)},
              {"vendor_id", fmt::format("0x{:04x}", n.vendor_id)},
              {"device_id", fmt::format("0x{:04x}", n.device_id)},
              {"drm_render_minor", std::to_string(n.drm_render_minor)}},
             1);
  }
  out->push_back(gpus.Build());
}

void AddSelfFamilies(const Snapshot& s, std::vector<MetricFamily>* out) {
  FamilyBuilder probes(
      "gpuq_probe_attached",
      "1 if the kernel hook is attached in that mode and probe tier.",
      MetricType::Gauge);
  for (const ProbeStatus& p : s.probes) {
    probes.Add({{"probe", p.probe}, {"mode", p.mode}, {"tier", p.tier}},
               p.attached ? 1 : 0);
  }
  out->push_back(probes.Build());

  FamilyBuilder events("gpuq_events_total", "Events processed, by type.",
                       MetricType::Counter);
  for (uint16_t type = 1; type < GPUQ_EV__MAX; ++type) {
    events.Add({{"type", EventTypeName(type)}},
               static_cast<double>(s.events_by_type[type]));
  }
  out->push_back(events.Build());

  FamilyBuilder dropped("gpuq_events_dropped_total", "Events lost, by reason.",
                        MetricType::Counter);
  for (const auto& [reason, n] : DroppedEvents(s)) {
    dropped.Add({{"reason", reason}}, static_cast<double>(n));
  }
  out->push_back(dropped.Build());

  // Live only: a capture keeps the sum (prog_skipped), not each program's.
  if (!s.source_drops.prog_skipped_by_program.empty()) {
    FamilyBuilder skipped_runs(
        "gpuq_program_skipped_runs_total",
        "Runs of each of the agent's kernel programs that the kernel skipped "
        "(its recursion_misses); their sum is "
        "gpuq_events_dropped_total{reason=\"prog_skipped\"}.",
        MetricType::Counter);
    for (const ProgramSkips& p : s.source_drops.prog_skipped_by_program) {
      skipped_runs.Add({{"program", p.program}},
                       static_cast<double>(p.skipped));
    }
    out->push_back(skipped_runs.Build());
  }

  FamilyBuilder folded("gpuq_containers_folded",
                       "Containers whose series are folded into container=\"" +
                           std::string(kFoldedContainer) +
                           "\" by the per-container series cap.",
                       MetricType::Gauge);
  folded.Add({}, static_cast<double>(s.containers_folded));
  out->push_back(folded.Build());

  FamilyBuilder lookup_errors("gpuq_runtime_lookup_errors_total",
                              "Failed container runtime lookups, by client.",
                              MetricType::Counter);
  for (const auto& [runtime, n] : s.runtime_errors) {
    lookup_errors.Add({{"runtime", runtime}}, static_cast<double>(n));
  }
  out->push_back(lookup_errors.Build());
  if (s.metadata_evicted) {  // live, with runtime lookups
    FamilyBuilder evicted("gpuq_container_metadata_evicted_total",
                          "Container names and labels forgotten because the "
                          "resolver's capacity was reached; asked again when "
                          "next needed.",
                          MetricType::Counter);
    evicted.Add({}, static_cast<double>(*s.metadata_evicted));
    out->push_back(evicted.Build());
  }

  FamilyBuilder unresolved("gpuq_cgroups_unresolved_total",
                           "cgroup ids that could not be resolved to a path.",
                           MetricType::Counter);
  unresolved.Add({}, static_cast<double>(s.cgroups_unresolved));
  out->push_back(unresolved.Build());

  if (s.learned_cgroups) {  // live, with the cgroup watcher running
    const LearnedCgroupStats& l = *s.learned_cgroups;
    FamilyBuilder learned("gpuq_cgroup_paths_learned",
                          "Container cgroup paths learned at creation and "
                          "held now (kept for --container-grace after "
                          "removal).",
                          MetricType::Gauge);
    learned.Add({}, static_cast<double>(l.remembered));
    out->push_back(learned.Build());
    FamilyBuilder forgotten(
        "gpuq_cgroup_paths_forgotten_total",
        "Learned cgroup paths forgotten: expired (grace after removal) or "
        "evicted (capacity reached, before their grace ran out).",
        MetricType::Counter);
    forgotten.Add({{"reason", "expired"}}, static_cast<double>(l.expired));
    forgotten.Add({{"reason", "evicted"}}, static_cast<double>(l.evicted));
    out->push_back(forgotten.Build());
    FamilyBuilder lost("gpuq_cgroup_events_lost_total",
                       "cgroup creations and removals the kernel could not "
                       "pass on (ring buffer full).",
                       MetricType::Counter);
    lost.Add({}, static_cast<double>(l.lost));
    out->push_back(lost.Build());
  }

  if (s.reconcile_enabled) {
    FamilyBuilder drift("gpuq_reconcile_drift_queues",
                        "Live queues in the model minus those in KFD sysfs "
                        "after the last reconciliation.",
                        MetricType::Gauge);
    for (const auto& [gpu, d] : s.reconcile.drift_per_gpu) {
      drift.Add({{"gpu_id", std::to_string(gpu)}}, static_cast<double>(d));
    }
    out->push_back(drift.Build());
    FamilyBuilder runs("gpuq_reconcile_runs_total",
                       "Reconciliation passes against KFD sysfs.",
                       MetricType::Counter);
    runs.Add({}, static_cast<double>(s.reconcile.runs));
    out->push_back(runs.Build());
    FamilyBuilder errors("gpuq_reconcile_errors_total",
                         "Reconciliation passes that could not read sysfs.",
                         MetricType::Counter);
    errors.Add({}, static_cast<double>(s.reconcile.errors));
    out->push_back(errors.Build());
    FamilyBuilder corrections(
        "gpuq_reconcile_corrections_total",
        "Queues added to or removed from the model by reconciliation.",
        MetricType::Counter);
    corrections.Add({{"action", "added"}},
                    static_cast<double>(s.reconcile.added));
    corrections.Add({{"action", "removed"}},
                    static_cast<double>(s.reconcile.removed));
    out->push_back(corrections.Build());
  }

  FamilyBuilder source("gpuq_source_info", "Where events come from.",
                       MetricType::Gauge);
  source.Add({{"source", s.source}}, 1);
  out->push_back(source.Build());

  if (s.queue_priority) {
    FamilyBuilder priority(
        "gpuq_kernel_queue_priority_info",
        "Whether the running amdkfd programs a queue's own priority into the "
        "hardware besides its pipe priority: programmed (before Linux 7.0), "
        "ignored (7.0 and later, \"drm/amdkfd: Disable MQD queue priority\": "
        "only gpuq_queues_by_priority's pipe priority applies), unknown (an "
        "out-of-tree amdgpu). Decided from the kernel release at start.",
        MetricType::Gauge);
    priority.Add({{"queue_priority",
                   QueuePriorityAppliedLabel(s.queue_priority->applied)},
                  {"kernel_release", s.queue_priority->release}},
                 1);
    out->push_back(priority.Build());
  }

  FamilyBuilder build("gpuq_build_info", "gpuq-agent build.",
                      MetricType::Gauge);
  build.Add({{"version", GPUQ_VERSION},
             {"git_commit", GPUQ_GIT_COMMIT},
             {"abi_version", std::to_string(GPUQ_ABI_VERSION)}},
            1);
  out->push_back(build.Build());
}

}  // namespace

std::string QueueTypeLabel(uint32_t queue_type) {
  switch (queue_type) {
    case GPUQ_QUEUE_COMPUTE:
      return "compute";
    case GPUQ_QUEUE_SDMA:
      return "sdma";
    case GPUQ_QUEUE_HIQ:
      return "hiq";
    case GPUQ_QUEUE_DIQ:
      return "diq";
    case GPUQ_QUEUE_SDMA_XGMI:
      return "sdma_xgmi";
    case GPUQ_QUEUE_SDMA_BY_ENG_ID:
      return "sdma_by_eng_id";
    case GPUQ_QUEUE_UNKNOWN:
      return "unknown";
    default:
      return fmt::format("type_{}", queue_type);
  }
}

std::string DestroyReasonLabel(uint32_t reason) {
  switch (reason) {
    case GPUQ_DESTROY_IOCTL:
      return "ioctl";
    case GPUQ_DESTROY_PROCESS_EXIT:
      return "process_exit";
    default:
      return "unknown";
  }
}

std::string SchedulerLabel(Scheduler scheduler) {
  return scheduler == Scheduler::kMes ? "mes" : "hws";
}

std::string UnmapFilterLabel(uint32_t filter) {
  // enum kfd_unmap_queues_filter (kfd_priv.h); 0 is ours: one MES queue.
  switch (filter) {
    case 0:
      return "queue";
    case 1:
      return "all_queues";
    case 2:
      return "dynamic_queues";
    case 3:
      return "by_pasid";
    default:
      return fmt::format("filter_{}", filter);
  }
}

std::string RunlistCauseLabel(uint32_t cause) {
  switch (cause) {
    case GPUQ_CAUSE_CREATE:
      return "create";
    case GPUQ_CAUSE_DESTROY:
      return "destroy";
    case GPUQ_CAUSE_EVICT:
      return "evict";
    case GPUQ_CAUSE_RESTORE:
      return "restore";
    case GPUQ_CAUSE_TERMINATE:
      return "terminate";
    case GPUQ_CAUSE_UPDATE:
      return "update";
    default:
      return "unknown";
  }
}

std::string EvictionTriggerLabel(uint32_t trigger) {
  switch (trigger) {
    case GPUQ_TRIGGER_SVM:
      return "svm";
    case GPUQ_TRIGGER_USERPTR:
      return "userptr";
    case GPUQ_TRIGGER_TTM:
      return "ttm";
    case GPUQ_TRIGGER_SUSPEND:
      return "suspend";
    case GPUQ_TRIGGER_CRIU_CHECKPOINT:
      return "criu_checkpoint";
    case GPUQ_TRIGGER_CRIU_RESTORE:
      return "criu_restore";
    default:
      return "unknown";
  }
}

PacketClassLabels PacketClassLabelsOf(uint32_t packet_class) {
  switch (packet_class) {
    case GPUQ_PACKET_DISPATCH:
      return {"kernel_dispatch", "hsa"};
    case GPUQ_PACKET_EXT_DISPATCH:
      return {"kernel_dispatch", "amd_ext"};
    case GPUQ_PACKET_BARRIER:
      return {"barrier", "hsa"};
    case GPUQ_PACKET_OTHER:
      return {"other", "any"};
    default:
      return {"unreadable", "unknown"};
  }
}

std::string ErrnoLabel(int32_t error) {
  // The magnitude in 64 bits: a capture's or the kernel's value can be
  // INT32_MIN, whose negation overflows an int32 (found by fuzz_capture).
  const int64_t code = error < 0 ? -static_cast<int64_t>(error) : error;
  const char* name =
      code <= INT32_MAX ? strerrorname_np(static_cast<int>(code)) : nullptr;
  return name != nullptr ? name : fmt::format("errno_{}", code);
}

std::string GfxName(uint32_t v) {
  if (v == 0) return "";
  // KFD encodes gfx<major><minor><stepping> as major*10000 + minor*100 +
  // stepping; the name prints minor and stepping as one hex digit each.
  return fmt::format("gfx{}{:x}{:x}", v / 10000, (v / 100) % 100, v % 100);
}

std::vector<std::pair<const char*, uint64_t>> SourceDroppedEvents(
    const Snapshot& s) {
  return {
      {"ringbuf_full", s.source_drops.ringbuf_full},
      {"map_full", s.source_drops.map_full},
      {"decode_error", s.source_drops.decode_error},
      {"prog_skipped", s.source_drops.prog_skipped},
      {"kfd_exit_skipped", s.source_drops.kfd_exit_skipped},
      {"args_unreadable", s.source_drops.args_unreadable},
      {"doorbell_map_full", s.doorbell_map_full},
  };
}

std::vector<std::pair<const char*, uint64_t>> DroppedEvents(const Snapshot& s) {
  std::vector<std::pair<const char*, uint64_t>> reasons =
      SourceDroppedEvents(s);
  // The model's, before doorbell_map_full (the exposition's order since
  // that reason came).
  reasons.insert(reasons.end() - 1,
                 {{"unknown_queue", s.model_drops.unknown_queue},
                  {"duplicate_create", s.model_drops.duplicate_create},
                  {"no_owner", s.model_drops.no_owner}});
  return reasons;
}

std::vector<MetricFamily> BuildFamilies(const Snapshot& snapshot) {
  std::vector<MetricFamily> families;
  AddQueueFamilies(snapshot, &families);
  AddPriorityFamilies(snapshot, &families);
  AddSubmissionFamilies(snapshot, &families);
  AddRunlistFamilies(snapshot, &families);
  AddOversubscriptionFamilies(snapshot, &families);
  AddEvictionFamilies(snapshot, &families);
  AddInfoFamilies(snapshot, &families);
  AddSelfFamilies(snapshot, &families);
  return families;
}

std::vector<MetricFamily> PipelineCollectable::Collect() const {
  return BuildFamilies(pipeline_->TakeSnapshot());
}

}  // namespace gpuq
