#include "export/collector.h"

#include <fmt/format.h>

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
      : name_(kMetricPrefix + std::move(name)),
        help_(std::move(help)),
        type_(type) {}

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

const Attribution& AttributionOf(const Snapshot& s, uint64_t cgroup_id) {
  static const Attribution kUnknown{
      kUnresolvedContainer, "", "", {}, "", false};
  auto it = s.attributions.find(cgroup_id);
  return it != s.attributions.end() ? it->second : kUnknown;
}

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

/// The per-container labels of a cgroup; a snapshot built without labels
/// falls back to the attribution's own.
Labels ContainerLabels(const Snapshot& s, uint64_t cgroup_id) {
  auto it = s.labels.find(cgroup_id);
  if (it != s.labels.end()) return LabelsOf(s, it->second);
  const Attribution& a = AttributionOf(s, cgroup_id);
  return LabelsOf(s, SeriesLabels{a.container, a.pod, a.ns, {}});
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

std::string ErrnoLabel(int32_t error) {
  const int code = error < 0 ? -error : error;
  const char* name = strerrorname_np(code);
  return name != nullptr ? name : fmt::format("errno_{}", code);
}

void AddQueueFamilies(const Snapshot& s, std::vector<MetricFamily>* out) {
  FamilyBuilder queues("queues", "Live hardware queues.", MetricType::Gauge);
  FamilyBuilder creates("queue_creates_total",
                        "Hardware queues created (seeded queues excluded).",
                        MetricType::Counter);
  FamilyBuilder destroys("queue_destroys_total",
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

  FamilyBuilder processes("processes",
                          "Processes holding hardware queues on a GPU.",
                          MetricType::Gauge);
  for (const auto& [key, n] : s.processes) {
    processes.Add(With(ContainerLabels(s, key.first), "gpu_id",
                       std::to_string(key.second)),
                  static_cast<double>(n));
  }
  out->push_back(processes.Build());

  FamilyBuilder exits("process_exits_total",
                      "KFD processes whose address space went away.",
                      MetricType::Counter);
  for (const auto& [cgroup, n] : s.process_exits) {
    exits.Add(ContainerLabels(s, cgroup), static_cast<double>(n));
  }
  out->push_back(exits.Build());

  FamilyBuilder failures("queue_create_failures_total",
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

void AddInfoFamilies(const Snapshot& s, std::vector<MetricFamily>* out) {
  FamilyBuilder containers(
      "container_info",
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
  if (!s.containers.empty() || !s.labels.empty()) {
    for (const ContainerRow& c : s.containers) {
      info(LabelsOf(s, c.labels), c.container_id, c.name, c.runtime, c.pod_uid);
    }
  } else {
    for (const auto& [cgroup, a] : s.attributions) {
      if (!a.identity.InContainer()) continue;
      info(ContainerLabels(s, cgroup), a.identity.container_id, "",
           a.identity.runtime, a.identity.pod_uid);
    }
  }
  out->push_back(containers.Build());

  FamilyBuilder gpus("gpu_info",
                     "KFD GPU nodes; join key to other GPU exporters.",
                     MetricType::Gauge);
  for (const auto& [gpu_id, n] : s.gpus) {
    gpus.Add({{"gpu_id", std::to_string(gpu_id)},
              {"node", std::to_string(n.node)},
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
  FamilyBuilder probes("probe_attached",
                       "1 if the kernel hook is attached in that mode.",
                       MetricType::Gauge);
  for (const ProbeStatus& p : s.probes) {
    probes.Add({{"probe", p.probe}, {"mode", p.mode}}, p.attached ? 1 : 0);
  }
  out->push_back(probes.Build());

  FamilyBuilder events("events_total", "Events processed, by type.",
                       MetricType::Counter);
  for (uint16_t type = 1; type < GPUQ_EV__MAX; ++type) {
    events.Add({{"type", EventTypeName(type)}},
               static_cast<double>(s.events_by_type[type]));
  }
  out->push_back(events.Build());

  FamilyBuilder dropped("events_dropped_total", "Events lost, by reason.",
                        MetricType::Counter);
  const std::pair<const char*, uint64_t> drops[] = {
      {"ringbuf_full", s.source_drops.ringbuf_full},
      {"map_full", s.source_drops.map_full},
      {"decode_error", s.source_drops.decode_error},
      {"unknown_queue", s.model_drops.unknown_queue},
      {"duplicate_create", s.model_drops.duplicate_create},
  };
  for (const auto& [reason, n] : drops) {
    dropped.Add({{"reason", reason}}, static_cast<double>(n));
  }
  out->push_back(dropped.Build());

  FamilyBuilder folded("containers_folded",
                       "Containers whose series are folded into container=\"" +
                           std::string(kFoldedContainer) +
                           "\" by the per-container series cap.",
                       MetricType::Gauge);
  folded.Add({}, static_cast<double>(s.containers_folded));
  out->push_back(folded.Build());

  FamilyBuilder lookup_errors("runtime_lookup_errors_total",
                              "Failed container runtime lookups, by client.",
                              MetricType::Counter);
  for (const auto& [runtime, n] : s.runtime_errors) {
    lookup_errors.Add({{"runtime", runtime}}, static_cast<double>(n));
  }
  out->push_back(lookup_errors.Build());

  FamilyBuilder unresolved("cgroups_unresolved_total",
                           "cgroup ids that could not be resolved to a path.",
                           MetricType::Counter);
  unresolved.Add({}, static_cast<double>(s.cgroups_unresolved));
  out->push_back(unresolved.Build());

  if (s.reconcile_enabled) {
    FamilyBuilder drift("reconcile_drift_queues",
                        "Live queues in the model minus those in KFD sysfs "
                        "after the last reconciliation.",
                        MetricType::Gauge);
    for (const auto& [gpu, d] : s.reconcile.drift_per_gpu) {
      drift.Add({{"gpu_id", std::to_string(gpu)}}, static_cast<double>(d));
    }
    out->push_back(drift.Build());
    FamilyBuilder runs("reconcile_runs_total",
                       "Reconciliation passes against KFD sysfs.",
                       MetricType::Counter);
    runs.Add({}, static_cast<double>(s.reconcile.runs));
    out->push_back(runs.Build());
    FamilyBuilder errors("reconcile_errors_total",
                         "Reconciliation passes that could not read sysfs.",
                         MetricType::Counter);
    errors.Add({}, static_cast<double>(s.reconcile.errors));
    out->push_back(errors.Build());
    FamilyBuilder corrections(
        "reconcile_corrections_total",
        "Queues added to or removed from the model by reconciliation.",
        MetricType::Counter);
    corrections.Add({{"action", "added"}},
                    static_cast<double>(s.reconcile.added));
    corrections.Add({{"action", "removed"}},
                    static_cast<double>(s.reconcile.removed));
    out->push_back(corrections.Build());
  }

  FamilyBuilder source("source_info", "Where events come from.",
                       MetricType::Gauge);
  source.Add({{"source", s.source}}, 1);
  out->push_back(source.Build());

  FamilyBuilder build("build_info", "gpuq-agent build.", MetricType::Gauge);
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

std::string GfxName(uint32_t v) {
  if (v == 0) return "";
  // KFD encodes gfx<major><minor><stepping> as major*10000 + minor*100 +
  // stepping; the name prints minor and stepping as one hex digit each.
  return fmt::format("gfx{}{:x}{:x}", v / 10000, (v / 100) % 100, v % 100);
}

std::vector<MetricFamily> BuildFamilies(const Snapshot& snapshot) {
  std::vector<MetricFamily> families;
  AddQueueFamilies(snapshot, &families);
  AddInfoFamilies(snapshot, &families);
  AddSelfFamilies(snapshot, &families);
  return families;
}

std::vector<OnceProcess> OnceProcesses(const Snapshot& s) {
  std::vector<OnceProcess> out;
  for (const ProcessRow& p : s.process_rows) {
    const Labels labels = ContainerLabels(s, p.cgroup_id);
    out.push_back({labels[0].second, labels[1].second, labels[2].second, p.pid,
                   p.comm, p.exited, p.queues_per_gpu});
  }
  return out;
}

std::vector<MetricFamily> PipelineCollectable::Collect() const {
  return BuildFamilies(pipeline_->TakeSnapshot());
}

}  // namespace gpuq
