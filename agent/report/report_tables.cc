#include "report/report_tables.h"

#include <utility>

#include "common/text_table.h"
#include "model/container_rows.h"

namespace gpuq::report {
namespace {

using Json = nlohmann::ordered_json;

ReportCell Count(uint64_t n) { return {std::to_string(n), n}; }
ReportCell Text(const std::string& s) { return {s, s}; }
ReportCell OwnerCell(const Owner& o) {
  return {ContainerOrHost(o.container), OwnerJson(o)};
}

ReportTable CreateFailures(const RunReport& r) {
  ReportTable t{"create_failure_list",
                "create-failures",
                "Create failures",
                "Queue creation failures",
                "No queue creation failed in this run.",
                {{"CONTAINER", "container", "owner"},
                 {"PID", "pid", "pid", true},
                 {"GPU_ID", "GPU", "gpu_id", true},
                 {"ERROR", "error", "error"},
                 {"COUNT", "count", "count", true}},
                {}};
  for (const CreateFailureRow& f : r.create_failure_list) {
    t.rows.push_back({OwnerCell(f.owner), Count(f.pid), Count(f.gpu_id),
                      Text(f.error), Count(f.count)});
  }
  return t;
}

// The rows --once shows, at the capture's end: what a live `--once` would
// have printed then.
ReportTable ContainerGpusAtEnd(const RunReport& r) {
  ReportTable t{"container_gpus_at_end",
                "container-gpus-at-end",
                "Queues per container and GPU at the end",
                "Queues per container and GPU at the end of the run",
                "No container held a queue at the end of the run.",
                {{"CONTAINER", "container", "owner"},
                 {"GPU_ID", "GPU", "gpu_id", true},
                 {"COMPUTE", "compute", "compute", true},
                 {"SDMA", "SDMA", "sdma", true},
                 {"OTHER", "other", "other", true},
                 {"CREATED", "created", "created", true},
                 {"DESTROYED", "destroyed", "destroyed", true},
                 {"SUBMISSIONS", "submissions", "submissions", true},
                 {"UNSAMPLED", "unsampled", "unsampled", true}},
                {}};
  for (const ContainerGpuEndRow& g : r.container_gpus_at_end) {
    t.rows.push_back({OwnerCell(g.owner), Count(g.gpu_id), Count(g.compute),
                      Count(g.sdma), Count(g.other), Count(g.created),
                      Count(g.destroyed), Count(g.submissions),
                      Count(g.unsampled)});
  }
  return t;
}

}  // namespace

Json OwnerJson(const Owner& o) {
  return Json{{"container", o.container}, {"pod", o.pod}, {"namespace", o.ns}};
}

std::vector<ReportTable> ReportTables(const RunReport& r) {
  std::vector<ReportTable> tables;
  tables.push_back(CreateFailures(r));
  tables.push_back(ContainerGpusAtEnd(r));
  return tables;
}

const ReportTable* ReportTablePlacement::Take(const std::string& key) {
  for (size_t i = 0; i < tables_.size(); ++i) {
    if (!taken_[i] && key == tables_[i].key) {
      taken_[i] = true;
      return &tables_[i];
    }
  }
  return nullptr;
}

std::vector<const ReportTable*> ReportTablePlacement::Rest() {
  std::vector<const ReportTable*> rest;
  for (size_t i = 0; i < tables_.size(); ++i) {
    if (!taken_[i]) {
      taken_[i] = true;
      rest.push_back(&tables_[i]);
    }
  }
  return rest;
}

}  // namespace gpuq::report
