#include "export/once_render.h"

#include <fmt/format.h>
#include <prometheus/text_serializer.h>

#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

namespace gpuq {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Json = nlohmann::ordered_json;

std::string Label(const ClientMetric& m, const std::string& name) {
  for (const auto& l : m.label) {
    if (l.name == name) return l.value;
  }
  return "";
}

double Value(const MetricFamily& f, const ClientMetric& m) {
  return f.type == MetricType::Counter ? m.counter.value : m.gauge.value;
}

const MetricFamily* Find(const std::vector<MetricFamily>& families,
                         const std::string& name) {
  for (const auto& f : families) {
    if (f.name == "gpuq_" + name) return &f;
  }
  return nullptr;
}

// One row of the queue table: a container on a GPU.
struct RowKey {
  std::string container, pod, ns, gpu_id;
  bool operator<(const RowKey& o) const {
    return std::tie(container, pod, ns, gpu_id) <
           std::tie(o.container, o.pod, o.ns, o.gpu_id);
  }
};
struct Row {
  std::map<std::string, double> queues;  // by queue type
  double processes = 0, creates = 0;
  std::map<std::string, double> destroys;  // by reason
  double submissions = 0, pending = 0;
  double rate = 0;  // packets/s, from the processes' last two samples
  bool has_rate = false;
  double unmaps = 0;  // runlist unmaps this container caused
  double evictions = 0;
};

RowKey KeyOf(const ClientMetric& m) {
  return {Label(m, "container"), Label(m, "pod"), Label(m, "namespace"),
          Label(m, "gpu_id")};
}

std::map<RowKey, Row> QueueRows(const std::vector<MetricFamily>& families,
                                const std::vector<OnceProcess>& processes) {
  std::map<RowKey, Row> rows;
  if (const auto* f = Find(families, "queues")) {
    for (const auto& m : f->metric) {
      rows[KeyOf(m)].queues[Label(m, "queue_type")] += m.gauge.value;
    }
  }
  if (const auto* f = Find(families, "queue_creates_total")) {
    for (const auto& m : f->metric) rows[KeyOf(m)].creates += m.counter.value;
  }
  if (const auto* f = Find(families, "queue_destroys_total")) {
    for (const auto& m : f->metric) {
      rows[KeyOf(m)].destroys[Label(m, "reason")] += m.counter.value;
    }
  }
  if (const auto* f = Find(families, "processes")) {
    for (const auto& m : f->metric) rows[KeyOf(m)].processes += m.gauge.value;
  }
  if (const auto* f = Find(families, "submissions_total")) {
    for (const auto& m : f->metric) {
      rows[KeyOf(m)].submissions += m.counter.value;
    }
  }
  if (const auto* f = Find(families, "queue_pending_packets")) {
    for (const auto& m : f->metric) rows[KeyOf(m)].pending += m.gauge.value;
  }
  if (const auto* f = Find(families, "runlist_operations_total")) {
    for (const auto& m : f->metric) {
      if (Label(m, "op") == "unmap") rows[KeyOf(m)].unmaps += m.counter.value;
    }
  }
  if (const auto* f = Find(families, "evictions_total")) {
    for (const auto& m : f->metric) {
      rows[KeyOf(m)].evictions += m.counter.value;
    }
  }
  for (const OnceProcess& p : processes) {
    for (const auto& [gpu, rate] : p.submission_rate_per_gpu) {
      Row& row = rows[{p.container, p.pod, p.ns, std::to_string(gpu)}];
      row.rate += rate;
      row.has_rate = true;
    }
  }
  return rows;
}

std::string Num(double v) { return fmt::format("{}", v); }
std::string Rate(const Row& row) {
  return row.has_rate ? fmt::format("{:.1f}", row.rate) : "-";
}

// One runlist row per (gpu, scheduler): what the GPU's scheduler did.
struct RunlistRow {
  double unmaps = 0, maps = 0, failures = 0;
  double unmap_sum = 0, unmap_count = 0;
  double unmap_slowest = 0;  // upper bound of the highest non-empty bucket
  std::string failed;        // "unmap:ETIME=1 ..."
};

std::map<std::pair<std::string, std::string>, RunlistRow> RunlistRows(
    const std::vector<MetricFamily>& families) {
  std::map<std::pair<std::string, std::string>, RunlistRow> rows;
  auto key = [](const ClientMetric& m) {
    return std::make_pair(Label(m, "gpu_id"), Label(m, "scheduler"));
  };
  if (const auto* f = Find(families, "runlist_unmap_duration_seconds")) {
    for (const auto& m : f->metric) {
      RunlistRow& r = rows[key(m)];
      r.unmaps += static_cast<double>(m.histogram.sample_count);
      r.unmap_count += static_cast<double>(m.histogram.sample_count);
      r.unmap_sum += m.histogram.sample_sum;
      uint64_t below = 0;
      for (const auto& b : m.histogram.bucket) {
        if (b.cumulative_count > below) r.unmap_slowest = b.upper_bound;
        below = b.cumulative_count;
      }
      if (below < m.histogram.sample_count) {
        r.unmap_slowest = std::numeric_limits<double>::infinity();
      }
    }
  }
  if (const auto* f = Find(families, "runlist_map_duration_seconds")) {
    for (const auto& m : f->metric) {
      rows[key(m)].maps += static_cast<double>(m.histogram.sample_count);
    }
  }
  if (const auto* f = Find(families, "runlist_failures_total")) {
    for (const auto& m : f->metric) {
      RunlistRow& r = rows[key(m)];
      r.failures += m.counter.value;
      r.failed +=
          fmt::format("{}{}:{}={}", r.failed.empty() ? "" : " ", Label(m, "op"),
                      Label(m, "error"), m.counter.value);
    }
  }
  return rows;
}

// gpuq_container_info by (container, pod, namespace): the ids behind a row.
std::map<std::tuple<std::string, std::string, std::string>, const ClientMetric*>
ContainerInfo(const std::vector<MetricFamily>& families) {
  std::map<std::tuple<std::string, std::string, std::string>,
           const ClientMetric*>
      info;
  if (const auto* f = Find(families, "container_info")) {
    for (const auto& m : f->metric) {
      info[{Label(m, "container"), Label(m, "pod"), Label(m, "namespace")}] =
          &m;
    }
  }
  return info;
}

/// Left-aligned text table.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(header); }
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string Render() const {
    std::vector<size_t> width;
    for (const auto& row : rows_) {
      width.resize(std::max(width.size(), row.size()));
      for (size_t i = 0; i < row.size(); ++i) {
        width[i] = std::max(width[i], row[i].size());
      }
    }
    std::string out;
    for (const auto& row : rows_) {
      std::string line;
      for (size_t i = 0; i < row.size(); ++i) {
        line += i + 1 < row.size() ? fmt::format("{:<{}}  ", row[i], width[i])
                                   : row[i];
      }
      out += line + "\n";
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

std::string GpuList(const std::map<uint32_t, uint32_t>& queues_per_gpu) {
  std::string out;
  for (const auto& [gpu, n] : queues_per_gpu) {
    out += fmt::format("{}{}:{}", out.empty() ? "" : ",", gpu, n);
  }
  return out;
}

std::string RenderTable(const std::vector<MetricFamily>& families,
                        const std::vector<OnceProcess>& processes) {
  std::string out;
  std::string source = "?";
  if (const auto* f = Find(families, "source_info")) {
    if (!f->metric.empty()) source = Label(f->metric[0], "source");
  }
  double events = 0;
  if (const auto* f = Find(families, "events_total")) {
    for (const auto& m : f->metric) events += m.counter.value;
  }
  out += fmt::format("gpuq-agent snapshot: source {}, {} events\n\n", source,
                     events);

  Table queues({"CONTAINER", "ID", "POD", "NAMESPACE", "GPU_ID", "COMPUTE",
                "SDMA", "OTHER", "PROCS", "CREATED", "DESTROYED(ioctl/exit)",
                "SUBMITTED", "SUBMIT/S", "PENDING", "UNMAPS", "EVICTIONS"});
  const auto info = ContainerInfo(families);
  double total_live = 0;
  for (const auto& [key, row] : QueueRows(families, processes)) {
    double other = 0;
    for (const auto& [type, n] : row.queues) {
      if (type != "compute" && type != "sdma") other += n;
      total_live += n;
    }
    auto get = [](const std::map<std::string, double>& m, const char* k) {
      auto it = m.find(k);
      return it == m.end() ? 0.0 : it->second;
    };
    auto ci = info.find({key.container, key.pod, key.ns});
    const std::string id =
        ci == info.end() ? "-"
                         : Label(*ci->second, "container_id").substr(0, 12);
    queues.Add({key.container.empty() ? "(host)" : key.container, id,
                key.pod.empty() ? "-" : key.pod, key.ns.empty() ? "-" : key.ns,
                key.gpu_id, Num(get(row.queues, "compute")),
                Num(get(row.queues, "sdma")), Num(other), Num(row.processes),
                Num(row.creates),
                fmt::format("{}/{}", get(row.destroys, "ioctl"),
                            get(row.destroys, "process_exit")),
                Num(row.submissions), Rate(row), Num(row.pending),
                Num(row.unmaps), Num(row.evictions)});
  }
  out += "HARDWARE QUEUES\n" + queues.Render();
  out += fmt::format("live queues: {}\n", total_live);
  out +=
      "SUBMIT/S: AQL packets per second between the last two samples; "
      "UNMAPS: runlist preemptions the container's operations caused\n\n";

  const auto runlist = RunlistRows(families);
  if (!runlist.empty()) {
    Table rl({"GPU_ID", "SCHEDULER", "UNMAPS", "MAPS", "UNMAP_AVG_MS",
              "UNMAP_SLOWEST", "FAILED"});
    for (const auto& [key, r] : runlist) {
      rl.Add({key.first, key.second, Num(r.unmaps), Num(r.maps),
              r.unmap_count > 0
                  ? fmt::format("{:.3f}", r.unmap_sum / r.unmap_count * 1e3)
                  : "-",
              r.unmap_count > 0 ? fmt::format("<={}s", r.unmap_slowest) : "-",
              r.failed.empty() ? "-" : r.failed});
    }
    out += "RUNLIST (preemption)\n" + rl.Render() + "\n";
  }

  if (!processes.empty()) {
    Table procs({"PID", "COMM", "CONTAINER", "POD", "NAMESPACE",
                 "QUEUES(gpu:n)", "SUBMIT/S(gpu:n)", "STATE"});
    for (const OnceProcess& p : processes) {
      std::string rates;
      for (const auto& [gpu, r] : p.submission_rate_per_gpu) {
        rates += fmt::format("{}{}:{:.1f}", rates.empty() ? "" : ",", gpu, r);
      }
      procs.Add({std::to_string(p.pid), p.comm.empty() ? "-" : p.comm,
                 p.container.empty() ? "(host)" : p.container,
                 p.pod.empty() ? "-" : p.pod, p.ns.empty() ? "-" : p.ns,
                 GpuList(p.queues_per_gpu), rates.empty() ? "-" : rates,
                 p.exited ? "exited" : "running"});
    }
    out += "PROCESSES\n" + procs.Render() + "\n";
  }

  if (const auto* f = Find(families, "gpu_info")) {
    Table gpus({"GPU_ID", "NODE", "GFX", "PCI", "UNIQUE_ID", "RENDER_MINOR"});
    for (const auto& m : f->metric) {
      gpus.Add({Label(m, "gpu_id"), Label(m, "node"), Label(m, "gfx"),
                Label(m, "pci"), Label(m, "unique_id"),
                Label(m, "drm_render_minor")});
    }
    out += "GPUS\n" + (f->metric.empty() ? "(none known)\n" : gpus.Render());
    out += "\n";
  }
  if (const auto* f = Find(families, "probe_attached")) {
    if (!f->metric.empty()) {
      Table probes({"PROBE", "MODE", "ATTACHED"});
      for (const auto& m : f->metric) {
        probes.Add({Label(m, "probe"), Label(m, "mode"),
                    m.gauge.value > 0 ? "yes" : "no"});
      }
      out += "PROBES\n" + probes.Render() + "\n";
    }
  }
  std::string drops;
  if (const auto* f = Find(families, "events_dropped_total")) {
    for (const auto& m : f->metric) {
      if (m.counter.value > 0) {
        drops += fmt::format(" {}={}", Label(m, "reason"), m.counter.value);
      }
    }
  }
  out +=
      "dropped events:" + (drops.empty() ? std::string(" none") : drops) + "\n";
  return out;
}

const char* TypeName(MetricType type) {
  switch (type) {
    case MetricType::Counter:
      return "counter";
    case MetricType::Histogram:
      return "histogram";
    default:
      return "gauge";
  }
}

Json FamilyJson(const MetricFamily& f) {
  Json samples = Json::array();
  for (const auto& m : f.metric) {
    Json labels = Json::object();
    for (const auto& l : m.label) labels[l.name] = l.value;
    if (f.type != MetricType::Histogram) {
      samples.push_back({{"labels", labels}, {"value", Value(f, m)}});
      continue;
    }
    // Cumulative bucket counts keyed by upper bound, as in the exposition.
    Json buckets = Json::object();
    for (const auto& b : m.histogram.bucket) {
      buckets[fmt::format("{}", b.upper_bound)] = b.cumulative_count;
    }
    buckets["+Inf"] = m.histogram.sample_count;
    samples.push_back({{"labels", labels},
                       {"count", m.histogram.sample_count},
                       {"sum", m.histogram.sample_sum},
                       {"buckets", buckets}});
  }
  return {{"name", f.name},
          {"type", TypeName(f.type)},
          {"help", f.help},
          {"samples", samples}};
}

std::string RenderJson(const std::vector<MetricFamily>& families,
                       const std::vector<OnceProcess>& processes) {
  const auto info = ContainerInfo(families);
  Json containers = Json::array();
  std::map<std::tuple<std::string, std::string, std::string>, Json> by_c;
  for (const auto& [key, row] : QueueRows(families, processes)) {
    Json& c = by_c[{key.container, key.pod, key.ns}];
    if (c.is_null()) {
      c = {{"container", key.container},
           {"pod", key.pod},
           {"namespace", key.ns},
           {"container_id", ""},
           {"name", ""},
           {"runtime", ""},
           {"pod_uid", ""},
           {"pids", Json::array()},
           {"gpus", Json::array()}};
      auto ci = info.find({key.container, key.pod, key.ns});
      if (ci != info.end()) {
        for (const char* k : {"container_id", "name", "runtime", "pod_uid"}) {
          c[k] = Label(*ci->second, k);
        }
      }
    }
    c["gpus"].push_back({{"gpu_id", key.gpu_id},
                         {"queues", row.queues},
                         {"processes", row.processes},
                         {"creates", row.creates},
                         {"destroys", row.destroys},
                         {"submissions", row.submissions},
                         {"submissions_per_second",
                          row.has_rate ? Json(row.rate) : Json(nullptr)},
                         {"pending_packets", row.pending},
                         {"runlist_unmaps_caused", row.unmaps},
                         {"evictions", row.evictions}});
  }
  Json procs = Json::array();
  for (const OnceProcess& p : processes) {
    Json& c = by_c[{p.container, p.pod, p.ns}];
    if (!c.is_null()) c["pids"].push_back(p.pid);
    Json queues = Json::object();
    for (const auto& [gpu, n] : p.queues_per_gpu)
      queues[std::to_string(gpu)] = n;
    Json rates = Json::object();
    for (const auto& [gpu, r] : p.submission_rate_per_gpu) {
      rates[std::to_string(gpu)] = r;
    }
    procs.push_back({{"pid", p.pid},
                     {"comm", p.comm},
                     {"container", p.container},
                     {"pod", p.pod},
                     {"namespace", p.ns},
                     {"exited", p.exited},
                     {"queues_per_gpu", queues},
                     {"submissions_per_second", rates}});
  }
  for (auto& [key, c] : by_c) containers.push_back(std::move(c));
  Json metrics = Json::array();
  for (const auto& f : families) metrics.push_back(FamilyJson(f));
  Json doc = {
      {"containers", containers}, {"processes", procs}, {"metrics", metrics}};
  // A comm, a GPU name or a cgroup-derived label may be any bytes: invalid
  // UTF-8 is replaced (U+FFFD), never thrown as type_error 316.
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace

std::optional<OnceFormat> ParseOnceFormat(const std::string& name) {
  if (name == "table") return OnceFormat::kTable;
  if (name == "json") return OnceFormat::kJson;
  if (name == "prometheus") return OnceFormat::kPrometheus;
  return std::nullopt;
}

std::string RenderOnce(const std::vector<MetricFamily>& families,
                       OnceFormat format,
                       const std::vector<OnceProcess>& processes) {
  switch (format) {
    case OnceFormat::kTable:
      return RenderTable(families, processes);
    case OnceFormat::kJson:
      return RenderJson(families, processes);
    case OnceFormat::kPrometheus:
      return prometheus::TextSerializer().Serialize(families);
  }
  return "";
}

}  // namespace gpuq
