#include "export/once_render.h"

#include <fmt/format.h>
#include <gpuq/abi.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string_view>
#include <tuple>

#include "common/text_table.h"
#include "export/collector.h"
#include "export/row_json.h"
#include "model/container_rows.h"
#include "resolver/gpu_topology.h"
#include "sources/runtime_knobs.h"

namespace gpuq {
namespace {

using prometheus::MetricFamily;
using prometheus::MetricType;
using Json = nlohmann::ordered_json;

// The (container, GPU) rows are model/container_rows.h's, the ones `top`
// and `report` show; their labels are the collector's.

std::string Num(double v) { return fmt::format("{}", v); }

// The family `name` of `families`, or an empty one: BuildFamilies() always
// builds these (a renamed family would empty its section here, which
// once_render_test and the replay golden would show).
const MetricFamily* FindFamily(const std::vector<MetricFamily>& families,
                               const std::string& name) {
  for (const MetricFamily& f : families) {
    if (f.name == name) return &f;
  }
  static const MetricFamily kNone{};
  return &kNone;
}

std::string LabelOf(const prometheus::ClientMetric& m,
                    const std::string& name) {
  for (const auto& l : m.label) {
    if (l.name == name) return l.value;
  }
  return "";
}

// The ids behind a (container, pod, namespace) row, as gpuq_container_info
// says them; of two containers with the same labels, the one it lists last.
struct ContainerIds {
  std::string container_id, name, runtime, pod_uid;
};
std::map<std::tuple<std::string, std::string, std::string>, ContainerIds>
ContainerIdsOf(const std::vector<MetricFamily>& families) {
  std::map<std::tuple<std::string, std::string, std::string>, ContainerIds> ids;
  for (const auto& m : FindFamily(families, "gpuq_container_info")->metric) {
    ids[{LabelOf(m, "container"), LabelOf(m, "pod"), LabelOf(m, "namespace")}] =
        {LabelOf(m, "container_id"), LabelOf(m, "name"), LabelOf(m, "runtime"),
         LabelOf(m, "pod_uid")};
  }
  return ids;
}

// One runlist row per (gpu, scheduler): what the GPU's scheduler did, read
// from the collector's runlist families (gpuq_runlist_unmap_duration_seconds,
// gpuq_runlist_map_duration_seconds, gpuq_runlist_failures_total).
struct RunlistRow {
  double unmaps = 0, maps = 0, failures = 0;
  double unmap_sum = 0;
  double unmap_slowest = 0;  // upper bound of the highest non-empty bucket
  std::string failed;        // "unmap:ETIME=1 ..."
};

std::map<std::pair<std::string, std::string>, RunlistRow> RunlistRows(
    const std::vector<MetricFamily>& families) {
  using Key = std::pair<std::string, std::string>;  // gpu_id, scheduler
  auto key = [](const prometheus::ClientMetric& m) {
    return Key(LabelOf(m, "gpu_id"), LabelOf(m, "scheduler"));
  };
  std::map<Key, RunlistRow> rows;
  for (const auto& m :
       FindFamily(families, "gpuq_runlist_unmap_duration_seconds")->metric) {
    const auto& h = m.histogram;
    RunlistRow& r = rows[key(m)];
    r.unmaps += static_cast<double>(h.sample_count);
    r.unmap_sum += h.sample_sum;
    // The first bucket holding every unmap (+Inf when one took longer than
    // the last finite bound: the family lists the finite ones only).
    r.unmap_slowest = std::numeric_limits<double>::infinity();
    for (const auto& b : h.bucket) {
      if (b.cumulative_count >= h.sample_count) {
        r.unmap_slowest = b.upper_bound;
        break;
      }
    }
  }
  for (const auto& m :
       FindFamily(families, "gpuq_runlist_map_duration_seconds")->metric) {
    rows[key(m)].maps += static_cast<double>(m.histogram.sample_count);
  }
  // Listed by (op, error) label.
  std::map<Key, std::map<std::pair<std::string, std::string>, double>> failed;
  for (const auto& m :
       FindFamily(families, "gpuq_runlist_failures_total")->metric) {
    failed[key(m)][{LabelOf(m, "op"), LabelOf(m, "error")}] += m.counter.value;
  }
  for (const auto& [k, by_error] : failed) {
    RunlistRow& r = rows[k];
    for (const auto& [op_error, n] : by_error) {
      r.failures += n;
      r.failed += fmt::format("{}{}:{}={}", r.failed.empty() ? "" : " ",
                              op_error.first, op_error.second, n);
    }
  }
  return rows;
}

// One row per HWS GPU, by gpu_id as a number, from the collector's
// oversubscription families (gpuq_runlist_oversubscribed, _maps_total by
// reason, _seconds_total, gpuq_runlist_entries and _entry_limit by kind).
struct OversubscriptionRow {
  bool oversubscribed = false;
  std::map<std::string, double> entries, limits;  // by kind label
  std::string reasons;  // "compute_queues=1 ...": the reasons above 0
  double seconds = 0;
};

std::map<uint64_t, OversubscriptionRow> OversubscriptionRows(
    const std::vector<MetricFamily>& families) {
  std::map<uint64_t, OversubscriptionRow> rows;
  auto row = [&rows](const prometheus::ClientMetric& m) -> auto& {
    return rows[std::strtoull(LabelOf(m, "gpu_id").c_str(), nullptr, 10)];
  };
  for (const auto& m :
       FindFamily(families, "gpuq_runlist_oversubscribed")->metric) {
    row(m).oversubscribed = m.gauge.value != 0;
  }
  for (const auto& m :
       FindFamily(families, "gpuq_runlist_oversubscribed_maps_total")->metric) {
    if (m.counter.value == 0) continue;
    std::string& reasons = row(m).reasons;
    reasons += fmt::format("{}{}={}", reasons.empty() ? "" : " ",
                           LabelOf(m, "reason"), m.counter.value);
  }
  for (const auto& m :
       FindFamily(families, "gpuq_runlist_oversubscribed_seconds_total")
           ->metric) {
    row(m).seconds = m.counter.value;
  }
  for (const auto& m : FindFamily(families, "gpuq_runlist_entries")->metric) {
    row(m).entries[LabelOf(m, "kind")] = m.gauge.value;
  }
  for (const auto& m :
       FindFamily(families, "gpuq_runlist_entry_limit")->metric) {
    row(m).limits[LabelOf(m, "kind")] = m.gauge.value;
  }
  return rows;
}

std::string GpuList(const std::map<uint32_t, uint32_t>& queues_per_gpu) {
  std::string out;
  for (const auto& [gpu, n] : queues_per_gpu) {
    out += fmt::format("{}{}:{}", out.empty() ? "" : ",", gpu, n);
  }
  return out;
}

// The default table's (container, GPU) columns, by RowColumn key: how many
// queues of which type each container holds where and in how many
// processes, how busy it keeps them (rate, packets waiting) and what takes
// them off the GPU. With CONTAINER, POD and GPU_ID that is 110 columns for
// the bundled capture's names, so longer names still fit in 120. The rest
// (ids, namespaces, totals since the series began, priorities, CU masks,
// unsampled queues, unmaps caused, seconds off, evicted queues) is in
// --output wide and the JSON.
constexpr const char* kTableColumns[] = {"compute",
                                         "sdma",
                                         "other",
                                         "processes",
                                         "submissions_per_second",
                                         "pending_packets",
                                         "preempted",
                                         "evictions"};

bool InTable(const RowColumn& c) {
  for (const char* key : kTableColumns) {
    if (std::string_view(key) == c.key) return true;
  }
  return false;
}

// What the default table's lines fit in.
constexpr size_t kTableWidth = 120;

// PHYSICAL GPUS: the default table's columns summed per physical GPU, where
// one is partitioned (else each GPU's rows say it all, and it is left out).
std::string RenderPhysicalGpus(const Snapshot& s) {
  const std::vector<PhysicalGpu> physical = PhysicalGpus(s.gpus);
  if (std::none_of(physical.begin(), physical.end(),
                   [](const PhysicalGpu& p) { return p.Partitioned(); })) {
    return "";
  }
  std::vector<std::string> header = {"PHYSICAL", "PCI", "PARTITIONS"};
  std::vector<const RowColumn*> shown;
  for (const RowColumn& c : RowColumns()) {
    if (!InTable(c)) continue;
    shown.push_back(&c);
    header.emplace_back(c.header);
  }
  TextTable table(header);
  const std::map<uint32_t, RowTotals> rows = PhysicalGpuRows(s, physical);
  for (const PhysicalGpu& p : physical) {
    const auto row = rows.find(p.index);
    const RowTotals totals = row == rows.end() ? RowTotals{} : row->second;
    std::vector<std::string> cells = {std::to_string(p.index), p.pci,
                                      std::to_string(p.gpu_ids.size())};
    for (const RowColumn* c : shown) cells.push_back(c->text(totals));
    table.Add(std::move(cells));
  }
  return "PHYSICAL GPUS (each one's partitions summed; PROCS counts a process "
         "once)\n" +
         table.Render() + "\n";
}

std::string RenderTable(const Snapshot& s, bool wide) {
  std::string out;
  double events = 0;
  for (uint16_t type = 1; type < GPUQ_EV__MAX; ++type) {
    events += static_cast<double>(s.events_by_type[type]);
  }
  out += fmt::format("gpuq-agent snapshot: source {}, {} events\n\n", s.source,
                     events);

  std::vector<const RowColumn*> shown;
  std::vector<std::string> hidden;  // headers only --output wide shows
  std::vector<std::string> header = {"CONTAINER", "POD", "GPU_ID"};
  if (wide) {
    header = {"CONTAINER", "ID", "POD", "NAMESPACE", "GPU_ID"};
  } else {
    hidden = {"ID", "NAMESPACE"};
  }
  for (const RowColumn& c : RowColumns()) {
    if (wide || InTable(c)) {
      shown.push_back(&c);
      header.emplace_back(c.header);
    } else {
      hidden.emplace_back(c.header);
    }
  }
  TextTable queues(header);
  // Every section lists what /metrics says, read from the collector's own
  // families where the rows do not: their rules (sums, sort order, which
  // reasons, which container's ids) are its.
  const std::vector<MetricFamily> families = BuildFamilies(s);
  const auto info = ContainerIdsOf(families);
  uint64_t total_live = 0;
  for (const auto& [key, row] : ContainerGpuRows(s)) {
    total_live += row.Live();
    auto ci = info.find({key.container, key.pod, key.ns});
    const std::string id =
        ci == info.end() ? "-" : ci->second.container_id.substr(0, 12);
    std::vector<std::string> cells = {ContainerOrHost(key.container),
                                      DashIfEmpty(key.pod),
                                      std::to_string(key.gpu_id)};
    if (wide) {
      cells = {ContainerOrHost(key.container), id, DashIfEmpty(key.pod),
               DashIfEmpty(key.ns), std::to_string(key.gpu_id)};
    }
    for (const RowColumn* c : shown) cells.push_back(c->text(row));
    queues.Add(std::move(cells));
  }
  out += "HARDWARE QUEUES\n" + queues.Render();
  out += fmt::format("live queues: {}\n", total_live);
  // A line per column that needs one: the table's width, not the legend's.
  for (const RowColumn* c : shown) {
    if (*c->help == '\0') continue;
    out += WrapList(std::string(c->header) + ":", {c->help}, kTableWidth);
  }
  if (!hidden.empty()) {
    out += WrapList("--output wide adds:", hidden, kTableWidth);
  }
  out += "\n";

  const auto runlist = RunlistRows(families);
  if (!runlist.empty()) {
    TextTable rl({"GPU_ID", "SCHEDULER", "UNMAPS", "MAPS", "UNMAP_AVG_MS",
                  "UNMAP_SLOWEST", "FAILED"});
    for (const auto& [key, r] : runlist) {
      rl.Add({key.first, key.second, Num(r.unmaps), Num(r.maps),
              r.unmaps > 0 ? fmt::format("{:.3f}", r.unmap_sum / r.unmaps * 1e3)
                           : "-",
              r.unmaps > 0 ? fmt::format("<={}s", r.unmap_slowest) : "-",
              DashIfEmpty(r.failed)});
    }
    out += "RUNLIST (preemption)\n" + rl.Render() + "\n";
  }

  const auto oversubscription = OversubscriptionRows(families);
  if (!oversubscription.empty()) {
    TextTable os({"GPU_ID", "OVERSUBSCRIBED", "PROCESSES", "COMPUTE_QUEUES",
                  "GWS_QUEUES", "OVERSUBSCRIBED_MAPS", "OVERSUBSCRIBED_S"});
    for (const auto& gpu_row : oversubscription) {
      // A named reference, not a structured binding: C++17 lambdas cannot
      // capture those (clang refuses; the sanitize build is clang's).
      const uint64_t gpu_id = gpu_row.first;
      const OversubscriptionRow& r = gpu_row.second;
      auto of = [&](RunlistEntryKind kind) {
        const std::string label = RunlistEntryKindLabel(kind);
        const auto entries = r.entries.find(label);
        const double n = entries == r.entries.end() ? 0 : entries->second;
        const auto limit = r.limits.find(label);
        return limit == r.limits.end()
                   ? Num(n)
                   : fmt::format("{}/{}", Num(n), Num(limit->second));
      };
      os.Add({std::to_string(gpu_id), r.oversubscribed ? "yes" : "no",
              of(RunlistEntryKind::kProcesses),
              of(RunlistEntryKind::kComputeQueues),
              of(RunlistEntryKind::kGwsQueues), DashIfEmpty(r.reasons),
              fmt::format("{:.3f}", r.seconds)});
    }
    out +=
        "RUNLIST (oversubscription: count/limit of the runlist last built)\n" +
        os.Render() + "\n";
  }

  if (!s.process_rows.empty()) {
    // KNOBS is as wide as the variables a process was started with.
    std::vector<std::string> proc_header = {
        "PID",       "COMM",          "CONTAINER",       "POD",
        "NAMESPACE", "QUEUES(gpu:n)", "SUBMIT/S(gpu:n)", "STATE"};
    if (wide) proc_header.emplace_back("KNOBS");
    TextTable procs(proc_header);
    for (const ProcessRow& p : s.process_rows) {
      const SeriesLabels& l = s.LabelsOf(p.cgroup_id);
      std::string rates;
      for (const auto& [gpu, r] : p.submission_rate_per_gpu) {
        rates += fmt::format("{}{}:{:.1f}", rates.empty() ? "" : ",", gpu, r);
      }
      std::vector<std::string> cells = {std::to_string(p.pid),
                                        DashIfEmpty(p.comm),
                                        ContainerOrHost(l.container),
                                        DashIfEmpty(l.pod),
                                        DashIfEmpty(l.ns),
                                        GpuList(p.queues_per_gpu),
                                        DashIfEmpty(rates),
                                        p.exited ? "exited" : "running"};
      if (wide) {
        cells.push_back(RuntimeKnobsText(p.knobs));
      }
      procs.Add(std::move(cells));
    }
    out += "PROCESSES\n" + procs.Render();
    if (!wide) {
      out += WrapList("--output wide adds:", {"KNOBS"}, kTableWidth);
    }
    out += "\n";
  }

  // INDEX is amd-smi's (AMD's device-metrics-exporter's gpu_id); PHYSICAL
  // and PARTITION place a partition on its physical GPU. Listed in amd-smi's
  // order, so a partitioned GPU's partitions follow each other.
  TextTable gpus({"GPU_ID", "INDEX", "PHYSICAL", "PARTITION", "KFD_NODE", "GFX",
                  "PCI", "UNIQUE_ID", "RENDER_MINOR"});
  const MetricFamily* gpu_info = FindFamily(families, "gpuq_gpu_info");
  std::map<uint64_t, const prometheus::ClientMetric*> by_index;
  for (const auto& m : gpu_info->metric) {
    by_index[std::strtoull(LabelOf(m, "gpu_index").c_str(), nullptr, 10)] = &m;
  }
  for (const auto& [index, m] : by_index) {
    gpus.Add({LabelOf(*m, "gpu_id"), LabelOf(*m, "gpu_index"),
              LabelOf(*m, "gpu_physical_index"),
              LabelOf(*m, "gpu_partition_id"), LabelOf(*m, "kfd_node"),
              LabelOf(*m, "gfx"), LabelOf(*m, "pci"), LabelOf(*m, "unique_id"),
              LabelOf(*m, "drm_render_minor")});
  }
  out += "GPUS\n" +
         (gpu_info->metric.empty() ? "(none known)\n" : gpus.Render()) + "\n";
  out += RenderPhysicalGpus(s);

  const MetricFamily* attached = FindFamily(families, "gpuq_probe_attached");
  if (!attached->metric.empty()) {
    TextTable probes({"PROBE", "MODE", "ATTACHED"});
    for (const auto& m : attached->metric) {
      probes.Add({LabelOf(m, "probe"), LabelOf(m, "mode"),
                  m.gauge.value > 0 ? "yes" : "no"});
    }
    out += "PROBES\n" + probes.Render() + "\n";
  }
  std::string drops;
  for (const auto& m :
       FindFamily(families, "gpuq_events_dropped_total")->metric) {
    if (m.counter.value > 0) {
      drops += fmt::format(" {}={}", LabelOf(m, "reason"), m.counter.value);
    }
  }
  out +=
      "dropped events:" + (drops.empty() ? std::string(" none") : drops) + "\n";
  return out;
}

double Value(const MetricFamily& f, const prometheus::ClientMetric& m) {
  return f.type == MetricType::Counter ? m.counter.value : m.gauge.value;
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

std::string RenderJson(const Snapshot& s) {
  const std::vector<MetricFamily> families = BuildFamilies(s);
  const auto info = ContainerIdsOf(families);
  Json containers = Json::array();
  std::map<std::tuple<std::string, std::string, std::string>, Json> by_c;
  for (const auto& [key, row] : ContainerGpuRows(s)) {
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
        c["container_id"] = ci->second.container_id;
        c["name"] = ci->second.name;
        c["runtime"] = ci->second.runtime;
        c["pod_uid"] = ci->second.pod_uid;
      }
    }
    Json gpu = {{"gpu_id", std::to_string(key.gpu_id)}};
    gpu.update(RowJson(row));
    c["gpus"].push_back(std::move(gpu));
  }
  Json procs = Json::array();
  for (const ProcessRow& p : s.process_rows) {
    const SeriesLabels& l = s.LabelsOf(p.cgroup_id);
    Json& c = by_c[{l.container, l.pod, l.ns}];
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
                     {"container", l.container},
                     {"pod", l.pod},
                     {"namespace", l.ns},
                     {"exited", p.exited},
                     {"queues_per_gpu", queues},
                     {"submissions_per_second", rates},
                     {"knobs", p.knobs ? Json(*p.knobs) : Json(nullptr)}});
  }
  for (auto& [key, c] : by_c) containers.push_back(std::move(c));
  Json metrics = Json::array();
  for (const auto& f : families) metrics.push_back(FamilyJson(f));
  Json doc = {{"schema", kOnceSchema},
              {"containers", containers},
              {"processes", procs},
              {"metrics", metrics}};
  // A comm, a GPU name or a cgroup-derived label may be any bytes: invalid
  // UTF-8 is replaced (U+FFFD), never thrown as type_error 316.
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace

const std::vector<std::pair<std::string, OnceFormat>>& OnceFormats() {
  static const std::vector<std::pair<std::string, OnceFormat>> kFormats = {
      {"table", OnceFormat::kTable},
      {"wide", OnceFormat::kWide},
      {"json", OnceFormat::kJson},
      {"prometheus", OnceFormat::kPrometheus}};
  return kFormats;
}

std::optional<OnceFormat> ParseOnceFormat(const std::string& name) {
  for (const auto& [word, format] : OnceFormats()) {
    if (word == name) return format;
  }
  return std::nullopt;
}

std::string RenderOnce(const Snapshot& snapshot, OnceFormat format) {
  switch (format) {
    case OnceFormat::kTable:
      return RenderTable(snapshot, false);
    case OnceFormat::kWide:
      return RenderTable(snapshot, true);
    case OnceFormat::kJson:
      return RenderJson(snapshot);
    case OnceFormat::kPrometheus:
      return prometheus::TextSerializer().Serialize(BuildFamilies(snapshot));
  }
  return "";
}

}  // namespace gpuq
