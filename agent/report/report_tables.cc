#include "report/report_tables.h"

#include <utility>

#include "common/text_table.h"
#include "export/row_json.h"
#include "model/container_rows.h"
#include "report/render_text.h"

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

// Who preempted whom: per container whose queues were taken off a GPU, each
// container whose operations did it (its own included), how often and for
// how long.
ReportTable PreemptedBy(const RunReport& r) {
  ReportTable t{
      "preempted_by",
      "preempted-by",
      "Who preempted whom",
      "Who preempted whom (queues taken off the GPU, by whose operation)",
      "No container's queues were taken off a GPU in this run.",
      {{"CONTAINER", "container", "owner"},
       {"CAUSED_BY", "caused by", "caused_by"},
       {"PREEMPTIONS", "preemptions", "preemptions", true},
       {"OFF_GPU", "off the GPU (s)", "seconds_off_gpu", true}},
      {}};
  for (const PreemptedByRow& p : r.preempted_by) {
    // No process: the GPU's reset or suspend (gpuq_runlist_cause unknown).
    ReportCell by = p.by ? OwnerCell(*p.by)
                         : ReportCell{"(no process: reset, suspend)", nullptr};
    t.rows.push_back({OwnerCell(p.owner),
                      std::move(by),
                      Count(p.preemptions),
                      {FormatDuration(p.seconds_off_gpu), p.seconds_off_gpu}});
  }
  return t;
}

// The rows --once shows, at the capture's end: what a live `--once` would
// have printed then, one column per RowColumns() entry.
ReportTable ContainerGpusAtEnd(const RunReport& r) {
  ReportTable t{
      "container_gpus_at_end",
      "container-gpus-at-end",
      "Queues per container and GPU at the end",
      "Queues per container and GPU at the end of the run",
      "No container held a queue at the end of the run.",
      {{"CONTAINER", "container", "owner"}, {"GPU_ID", "GPU", "gpu_id", true}},
      {}};
  for (const RowColumn& c : RowColumns()) {
    t.columns.push_back({c.header, c.key, c.key, true});
  }
  for (const ContainerGpuEndRow& g : r.container_gpus_at_end) {
    std::vector<ReportCell> cells = {OwnerCell(g.owner), Count(g.gpu_id)};
    for (const RowColumn& c : RowColumns()) {
      cells.push_back({c.text(g.totals), RowColumnJson(c, g.totals)});
    }
    t.rows.push_back(std::move(cells));
  }
  return t;
}

}  // namespace

Json OwnerJson(const Owner& o) {
  return Json{{"container", o.container}, {"pod", o.pod}, {"namespace", o.ns}};
}

std::vector<ReportTable> ReportTables(const RunReport& r) {
  std::vector<ReportTable> tables;
  tables.push_back(PreemptedBy(r));
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
