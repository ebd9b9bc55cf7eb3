// --once rendering (export/once_render.h) of a small, hand-built snapshot:
// the table people read, the JSON scripts parse, and the exposition text
// that must match /metrics exactly.
#include "export/once_render.h"

#include <gpuq/abi.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "export/collector.h"
#include "model/container_rows.h"
#include "model/histogram.h"
#include "model/pipeline.h"

namespace gpuq::once_render_test {
namespace {

using prometheus::MetricFamily;

constexpr uint64_t kCgVllm = 1;
constexpr uint64_t kCgHost = 2;

Attribution Attr(const std::string& container, const std::string& path) {
  Attribution a;
  a.container = container;
  a.cgroup_path = path;
  a.resolved = true;
  return a;
}

// vllm container on GPU 11437: 3 compute + 2 SDMA live, 6 creates, 1 ioctl
// destroy, 1 process. Host on GPU 23710: 1 compute + 1 HIQ live, 2 creates,
// 1 ioctl destroy, 2 processes. 10 events, 2 unknown-queue drops.
Snapshot SmallSnapshot() {
  Snapshot s;
  s.source = "replay";
  s.attributions[kCgVllm] = Attr("0124dd351391", "/system.slice/docker.scope");
  s.attributions[kCgHost] = Attr("", "/user.slice");
  // TakeSnapshot labels every cgroup it attributes; exports read the labels.
  s.labels[kCgVllm] = SeriesLabels{"0124dd351391", "", "", {}};
  s.labels[kCgHost] = SeriesLabels{"", "", "", {}};

  QueueSeries compute;
  compute.live = 3;
  compute.creates = 4;
  compute.destroys[GPUQ_DESTROY_IOCTL] = 1;
  s.queue_series[{kCgVllm, 0, 11437, GPUQ_QUEUE_COMPUTE}] = compute;
  QueueSeries sdma;
  sdma.live = 2;
  sdma.creates = 2;
  s.queue_series[{kCgVllm, 0, 11437, GPUQ_QUEUE_SDMA}] = sdma;

  QueueSeries host_compute;
  host_compute.live = 1;
  host_compute.creates = 1;
  host_compute.destroys[GPUQ_DESTROY_IOCTL] = 1;
  s.queue_series[{kCgHost, 0, 23710, GPUQ_QUEUE_COMPUTE}] = host_compute;
  QueueSeries host_hiq;
  host_hiq.live = 1;
  host_hiq.creates = 1;
  s.queue_series[{kCgHost, 0, 23710, GPUQ_QUEUE_HIQ}] = host_hiq;

  s.processes[{kCgVllm, 11437}] = 1;
  s.processes[{kCgHost, 23710}] = 2;
  // The host's compute queue was found in sysfs: not sampled.
  s.unsampled_queues[{kCgHost, 23710, UnsampledReason::kSysfsOnly}] = 1;

  // vllm's queues taken off GPU 11437: 3 times by the host's updates
  // (0.25 s), once by its own create (0.05 s).
  s.preemptions[{kCgVllm, 11437, Scheduler::kHws, GPUQ_CAUSE_UPDATE, false}] = {
      3, 250000000};
  s.preemptions[{kCgVllm, 11437, Scheduler::kHws, GPUQ_CAUSE_CREATE, true}] = {
      1, 50000000};
  // vllm's 3 compute queues: 2 at high pipe priority, 1 fenced to a subset
  // of the GPU's CUs (and one whose mask enables every CU: not counted).
  s.queues_by_priority[{kCgVllm, 11437, PriorityClass::kHigh}] = 2;
  s.queues_by_priority[{kCgVllm, 11437, PriorityClass::kMedium}] = 1;
  s.queues_cu_masked[{kCgVllm, 11437, CuMaskClass::kRestricted}] = 1;
  s.queues_cu_masked[{kCgVllm, 11437, CuMaskClass::kAllCus}] = 1;
  // Its process evicted on that GPU, with its 5 queues.
  s.evicted[{kCgVllm, 11437}] = 1;
  s.queues_evicted[{kCgVllm, 11437}] = 5;

  GpuNode gpu;
  gpu.node = 1;
  gpu.gpu_id = 11437;
  gpu.name = "gfx942";
  gpu.gfx_target_version = 90402;
  gpu.location_id = 0x0500;
  gpu.drm_render_minor = 128;
  gpu.unique_id = 77;
  s.gpus[11437] = gpu;

  s.events_by_type[GPUQ_EV_QUEUE_CREATE] = 8;
  s.events_by_type[GPUQ_EV_QUEUE_DESTROY] = 2;
  s.model_drops.unknown_queue = 2;
  s.probes = {{"queue_create", "kfd_procfs_add_queue", "fentry", true, "",
               "lifecycle", "btf-fentry"},
              {"runlist_unmap", "unmap_queues_cpsch", "none", false,
               "not in kallsyms", "runlist", "none"}};
  return s;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> Fields(const std::string& line) {
  std::vector<std::string> fields;
  std::istringstream in(line);
  for (std::string f; in >> f;) fields.push_back(f);
  return fields;
}

// The first line whose first field is `first`, split into fields.
std::vector<std::string> RowStartingWith(const std::string& text,
                                         const std::string& first) {
  for (const std::string& line : Lines(text)) {
    const auto fields = Fields(line);
    if (!fields.empty() && fields[0] == first) return fields;
  }
  return {};
}

bool HasLine(const std::string& text, const std::string& wanted) {
  for (const std::string& line : Lines(text)) {
    if (line == wanted) return true;
  }
  return false;
}

TEST(OnceRenderTest, ParseOnceFormat) {
  EXPECT_EQ(ParseOnceFormat("table"), OnceFormat::kTable);
  EXPECT_EQ(ParseOnceFormat("wide"), OnceFormat::kWide);
  EXPECT_EQ(ParseOnceFormat("json"), OnceFormat::kJson);
  EXPECT_EQ(ParseOnceFormat("prometheus"), OnceFormat::kPrometheus);
  EXPECT_EQ(ParseOnceFormat(""), std::nullopt);
  EXPECT_EQ(ParseOnceFormat("yaml"), std::nullopt);
  EXPECT_EQ(ParseOnceFormat("json "), std::nullopt);
}

TEST(OnceRenderTest, WideTableHasHeaderHostRowAndRightNumbers) {
  const std::string out = RenderOnce(SmallSnapshot(), OnceFormat::kWide);
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(Lines(out)[0], "gpuq-agent snapshot: source replay, 10 events")
      << out;

  EXPECT_EQ(RowStartingWith(out, "CONTAINER"),
            (std::vector<std::string>{"CONTAINER",
                                      "ID",
                                      "POD",
                                      "NAMESPACE",
                                      "GPU_ID",
                                      "COMPUTE",
                                      "SDMA",
                                      "OTHER",
                                      "PROCS",
                                      "HIGH_PRIO",
                                      "CU_RESTRICTED",
                                      "CREATED",
                                      "DESTROYED(ioctl/exit)",
                                      "SUBMITTED",
                                      "SUBMIT/S",
                                      "PENDING",
                                      "UNSAMPLED",
                                      "UNMAPS",
                                      "PREEMPTED(self/other)",
                                      "OFF_GPU_S",
                                      "EVICTIONS",
                                      "EVICTED"}))
      << out;
  // An empty container label is the host, shown as "(host)"; empty pod and
  // namespace as "-". HIQ counts under OTHER. ID comes from
  // gpuq_container_info, which these families lack: "-".
  EXPECT_EQ(RowStartingWith(out, "(host)"),
            (std::vector<std::string>{"(host)", "-",     "-", "-", "23710", "1",
                                      "0",      "1",     "2", "0", "0",     "2",
                                      "1/0",    "0",     "-", "0", "1",     "0",
                                      "0/0",    "0.000", "0", "0"}))
      << out;
  EXPECT_EQ(RowStartingWith(out, "0124dd351391"),
            (std::vector<std::string>{"0124dd351391",
                                      "-",
                                      "-",
                                      "-",
                                      "11437",
                                      "3",
                                      "2",
                                      "0",
                                      "1",
                                      "2",
                                      "1",
                                      "6",
                                      "1/0",
                                      "0",
                                      "-",
                                      "0",
                                      "0",
                                      "0",
                                      "1/3",
                                      "0.300",
                                      "0",
                                      "5"}))
      << out;
  EXPECT_TRUE(HasLine(out, "live queues: 7")) << out;

  // The GPU table and the drop summary.
  const auto gpu_row = RowStartingWith(out, "11437");
  ASSERT_GE(gpu_row.size(), 7u) << out;
  EXPECT_EQ(gpu_row[1], "0");  // amd-smi's index
  EXPECT_EQ(gpu_row[2], "0");  // the physical GPU
  EXPECT_EQ(gpu_row[3], "0");  // its partition
  EXPECT_EQ(gpu_row[4], "1");  // KFD node
  EXPECT_EQ(gpu_row[5], "gfx942");
  EXPECT_EQ(gpu_row[6], "0000:05:00.0");
  // One GPU, not partitioned: no physical summary.
  EXPECT_EQ(out.find("PHYSICAL GPUS"), std::string::npos) << out;
  EXPECT_TRUE(HasLine(out, "dropped events: unknown_queue=2")) << out;
  // The probes, as gpuq_probe_attached lists them.
  EXPECT_EQ(RowStartingWith(out, "queue_create"),
            (std::vector<std::string>{"queue_create", "fentry", "yes"}))
      << out;
  EXPECT_EQ(RowStartingWith(out, "runlist_unmap"),
            (std::vector<std::string>{"runlist_unmap", "none", "no"}))
      << out;
}

// The default table fits 120 columns: the labels that tell rows apart, the
// queue counts by type, processes, rate, pending packets, preemptions and
// evictions; a line names the columns --output wide adds, and the legend
// explains only the columns shown, a line each.
TEST(OnceRenderTest, TableFits120ColumnsAndNamesTheRest) {
  const std::string out = RenderOnce(SmallSnapshot(), OnceFormat::kTable);
  for (const std::string& line : Lines(out)) {
    EXPECT_LE(line.size(), 120u) << line;
  }
  EXPECT_EQ(
      RowStartingWith(out, "CONTAINER"),
      (std::vector<std::string>{"CONTAINER", "POD", "GPU_ID", "COMPUTE", "SDMA",
                                "OTHER", "PROCS", "SUBMIT/S", "PENDING",
                                "PREEMPTED(self/other)", "EVICTIONS"}))
      << out;
  EXPECT_EQ(RowStartingWith(out, "(host)"),
            (std::vector<std::string>{"(host)", "-", "23710", "1", "0", "1",
                                      "2", "-", "0", "0/0", "0"}))
      << out;
  EXPECT_EQ(RowStartingWith(out, "0124dd351391"),
            (std::vector<std::string>{"0124dd351391", "-", "11437", "3", "2",
                                      "0", "1", "-", "0", "1/3", "0"}))
      << out;
  EXPECT_TRUE(HasLine(out, "live queues: 7")) << out;
  EXPECT_TRUE(HasLine(out,
                      "SUBMIT/S: AQL packets per second between the last two "
                      "samples"))
      << out;
  EXPECT_EQ(out.find("HIGH_PRIO:"), std::string::npos) << out;
  EXPECT_NE(out.find("--output wide adds: ID, NAMESPACE, HIGH_PRIO, "
                     "CU_RESTRICTED, CREATED, DESTROYED(ioctl/exit), "
                     "SUBMITTED, UNSAMPLED,\n  UNMAPS, OFF_GPU_S, EVICTED\n"),
            std::string::npos)
      << out;
  // The sections after the queues are those of the wide table.
  const std::string wide = RenderOnce(SmallSnapshot(), OnceFormat::kWide);
  EXPECT_EQ(out.substr(out.find("\nGPUS\n")),
            wide.substr(wide.find("\nGPUS\n")));
}

// The runlist table is the collector's runlist families: unmaps, maps and
// their mean from the duration histograms, the slowest as the first bucket
// holding every unmap (+Inf past the last finite bound), failures by label.
TEST(OnceRenderTest, RunlistRowsAreTheRunlistFamilies) {
  Snapshot s;
  RunlistSeries hws;
  hws.unmap.Observe(RunlistBuckets(), 0.0002);
  hws.unmap.Observe(RunlistBuckets(), 3600.0);  // past every finite bound
  hws.map.Observe(RunlistBuckets(), 0.0001);
  s.runlist[{64512, Scheduler::kHws}] = hws;
  s.runlist_failures[{64512, Scheduler::kHws, true, -62}] = 1;  // ETIME
  const std::string out = RenderOnce(s, OnceFormat::kTable);
  EXPECT_EQ(RowStartingWith(out, "64512"),
            (std::vector<std::string>{"64512", "hws", "2", "1", "1800000.100",
                                      "<=infs", "unmap:ETIME=1"}))
      << out;
}

TEST(OnceRenderTest, TableOfEmptySnapshot) {
  const std::string out = RenderOnce(Snapshot{}, OnceFormat::kTable);
  EXPECT_TRUE(HasLine(out, "live queues: 0")) << out;
  EXPECT_TRUE(HasLine(out, "dropped events: none")) << out;
  EXPECT_TRUE(HasLine(out, "(none known)")) << out;
  EXPECT_TRUE(RowStartingWith(out, "(host)").empty()) << out;
}

TEST(OnceRenderTest, JsonHasContainersAndMetrics) {
  const auto families = BuildFamilies(SmallSnapshot());
  const std::string out = RenderOnce(SmallSnapshot(), OnceFormat::kJson);
  nlohmann::json doc;
  ASSERT_NO_THROW(doc = nlohmann::json::parse(out)) << out;

  ASSERT_TRUE(doc["containers"].is_array());
  ASSERT_EQ(doc["containers"].size(), 2u) << out;
  const nlohmann::json* vllm = nullptr;
  const nlohmann::json* host = nullptr;
  for (const auto& c : doc["containers"]) {
    if (c["container"] == "0124dd351391") vllm = &c;
    if (c["container"] == "") host = &c;
  }
  ASSERT_NE(vllm, nullptr) << out;
  ASSERT_NE(host, nullptr) << out;
  EXPECT_EQ((*vllm)["pod"], "");
  EXPECT_EQ((*vllm)["namespace"], "");

  ASSERT_EQ((*vllm)["gpus"].size(), 1u);
  const auto& g = (*vllm)["gpus"][0];
  EXPECT_EQ(g["gpu_id"], "11437");
  EXPECT_EQ(g["queues"]["compute"], 3);
  EXPECT_EQ(g["queues"]["sdma"], 2);
  EXPECT_EQ(g["processes"], 1);
  EXPECT_EQ(g["creates"], 6);
  EXPECT_EQ(g["destroys"]["ioctl"], 1);
  EXPECT_EQ(g["destroys"]["process_exit"], 0);
  EXPECT_DOUBLE_EQ(g["seconds_off_gpu"].get<double>(), 0.3);

  EXPECT_EQ(g["high_priority"], 2);
  EXPECT_EQ(g["cu_restricted"], 1);
  EXPECT_EQ(g["queues_evicted"], 5);

  // One member per column of the table, by its key (model/container_rows.h):
  // a count as the table's cell, a cell of two figures as an object of
  // them, named by their metric's labels.
  const std::string table = RenderOnce(SmallSnapshot(), OnceFormat::kWide);
  const std::vector<std::string> header = RowStartingWith(table, "CONTAINER");
  const std::vector<std::string> cells = RowStartingWith(table, "0124dd351391");
  ASSERT_EQ(header.size(), cells.size());
  size_t checked = 0;
  for (const RowColumn& c : RowColumns()) {
    ASSERT_TRUE(g.contains(c.key)) << c.key;
    size_t at = 0;
    while (at < header.size() && header[at] != c.header) ++at;
    ASSERT_LT(at, header.size()) << c.header;
    const nlohmann::json& v = g[c.key];
    auto n = [](const nlohmann::json& j) {
      return std::to_string(j.get<uint64_t>());
    };
    switch (c.breakdown) {
      case RowBreakdown::kDestroyReason:
        EXPECT_EQ(n(v["ioctl"]) + "/" + n(v["process_exit"]), cells[at]);
        break;
      case RowBreakdown::kPreemptedCausedBy:
        EXPECT_EQ(n(v["self"]) + "/" + n(v["other"]), cells[at]);
        break;
      case RowBreakdown::kUnsampledReason: {
        uint64_t sum = 0;
        for (const auto& [why, k] : v.items()) sum += k.get<uint64_t>();
        EXPECT_EQ(std::to_string(sum), cells[at]);
        break;
      }
      case RowBreakdown::kNone:
        if (c.count != nullptr) {
          EXPECT_EQ(n(v), cells[at]) << c.key;
        }
        break;
    }
    ++checked;
  }
  EXPECT_EQ(checked, RowColumns().size());
  // Its schema comes first, so a reader can tell the layout before the rest.
  EXPECT_EQ(out.rfind("{\n  \"schema\": \"gpuq-once/1\",\n", 0), 0u) << out;
  EXPECT_EQ(doc["schema"], kOnceSchema);
  EXPECT_EQ(std::string(kOnceSchema), "gpuq-once/1");
  EXPECT_EQ(g["preempted"], nlohmann::json({{"self", 1}, {"other", 3}}));

  ASSERT_EQ((*host)["gpus"].size(), 1u);
  const auto& h = (*host)["gpus"][0];
  EXPECT_EQ(h["gpu_id"], "23710");
  EXPECT_EQ(h["queues"]["compute"], 1);
  EXPECT_EQ(h["queues"]["hiq"], 1);
  EXPECT_EQ(h["processes"], 2);
  // Why its submissions are not counted, by gpuq_unsampled_queues' reason.
  EXPECT_EQ(h["unsampled_queues"], nlohmann::json({{"sysfs_only", 1}}));
  EXPECT_EQ(g["unsampled_queues"], nlohmann::json::object());

  // metrics[]: every family, with its samples.
  ASSERT_TRUE(doc["metrics"].is_array());
  EXPECT_EQ(doc["metrics"].size(), families.size());
  bool found = false;
  for (const auto& m : doc["metrics"]) {
    if (m["name"] != "gpuq_queues") continue;
    found = true;
    EXPECT_EQ(m["type"], "gauge");
    ASSERT_TRUE(m["samples"].is_array());
    EXPECT_EQ(m["samples"].size(), 4u);
    double total = 0;
    for (const auto& sample : m["samples"]) {
      EXPECT_TRUE(sample["labels"].contains("queue_type"));
      total += sample["value"].get<double>();
    }
    EXPECT_EQ(total, 7);
  }
  EXPECT_TRUE(found) << out;
  for (const auto& m : doc["metrics"]) {
    if (m["name"] == "gpuq_queue_creates_total") {
      EXPECT_EQ(m["type"], "counter");
    }
  }
}

// A process name is whatever bytes the process chose: --once --output json
// replaces invalid UTF-8 instead of throwing nlohmann's type_error 316
// (found by tests/fuzz/capture_fuzzer).
// Two containers whose series carry the same labels (two pods' "worker"
// without --labels): the row shows the ids gpuq_container_info lists last,
// in the table and in JSON alike.
TEST(OnceRenderTest, ContainerIdsAreTheInfoFamilysLastOfTheSameLabels) {
  Snapshot s = SmallSnapshot();
  ContainerRow older;
  older.labels = s.labels[kCgVllm];
  older.container_id = "aaaa11112222";
  older.name = "vllm-old";
  older.runtime = "docker";
  ContainerRow newer = older;
  newer.container_id = "ffff33334444";
  newer.name = "vllm-new";
  s.containers = {newer, older};  // the family sorts them, not this order

  const auto families = BuildFamilies(s);
  std::string last_id;
  std::string last_name;
  for (const MetricFamily& f : families) {
    if (f.name != "gpuq_container_info") continue;
    for (const auto& m : f.metric) {
      for (const auto& l : m.label) {
        if (l.name == "container_id") last_id = l.value;
        if (l.name == "name") last_name = l.value;
      }
    }
  }
  ASSERT_EQ(last_id, "ffff33334444");

  const std::vector<std::string> row =
      RowStartingWith(RenderOnce(s, OnceFormat::kWide), "0124dd351391");
  ASSERT_GT(row.size(), 1u);
  EXPECT_EQ(row[1], last_id.substr(0, 12));

  const auto doc = nlohmann::json::parse(RenderOnce(s, OnceFormat::kJson));
  bool seen = false;
  for (const auto& c : doc["containers"]) {
    if (c["container"] != "0124dd351391") continue;
    seen = true;
    EXPECT_EQ(c["container_id"], last_id);
    EXPECT_EQ(c["name"], last_name);
    EXPECT_EQ(c["runtime"], "docker");
  }
  EXPECT_TRUE(seen);
}

TEST(OnceRenderTest, JsonReplacesInvalidUtf8) {
  Snapshot s = SmallSnapshot();
  ProcessRow p;
  p.pid = 7;
  p.comm = "bad\xff";
  p.cgroup_id = kCgHost;
  p.queues_per_gpu[11437] = 1;
  s.process_rows.push_back(p);
  std::string out;
  ASSERT_NO_THROW(out = RenderOnce(s, OnceFormat::kJson));
  EXPECT_NE(out.find("bad\xef\xbf\xbd"), std::string::npos) << out;
  nlohmann::json parsed;
  EXPECT_NO_THROW(parsed = nlohmann::json::parse(out));
}

TEST(OnceRenderTest, PrometheusIsTheExpositionText) {
  // --once --format prometheus must be exactly what /metrics serves.
  const auto families = BuildFamilies(SmallSnapshot());
  const std::string out = RenderOnce(SmallSnapshot(), OnceFormat::kPrometheus);
  EXPECT_EQ(out, prometheus::TextSerializer().Serialize(families));
  EXPECT_NE(out.find("gpuq_queues{"), std::string::npos) << out;
  EXPECT_NE(out.find("# TYPE gpuq_queue_creates_total counter"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("_total_total"), std::string::npos) << out;
}

}  // namespace
}  // namespace gpuq::once_render_test
