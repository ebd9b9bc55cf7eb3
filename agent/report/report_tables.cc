#include "report/report_tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "common/text_table.h"
#include "export/row_json.h"
#include "model/container_rows.h"
#include "sources/runtime_knobs.h"

namespace gpuq::report {
namespace {

using Json = nlohmann::ordered_json;

ReportCell Text(const std::string& s) { return {s, s}; }
// A cell of a column only text and HTML show, or only the JSON.
ReportCell TextOnly(std::string s) { return {std::move(s), nullptr}; }
ReportCell JsonOnly(Json j) { return {"", std::move(j)}; }

ReportCell Count(uint64_t n) { return {std::to_string(n), n}; }
ReportCell Rate(double per_s) { return {FormatRate(per_s), per_s}; }
ReportCell YesNo(bool b) { return {b ? "yes" : "no", b}; }
ReportCell Class(QueueClass c) { return Text(QueueClassName(c)); }
// A process's runtime knobs: "-" (JSON null) when its environment was not
// read, "none" (JSON "") when it set none.
ReportCell KnobsCell(const std::optional<std::string>& knobs) {
  return {RuntimeKnobsText(knobs), knobs ? Json(*knobs) : Json(nullptr)};
}
ReportCell OwnerCell(const Owner& o) {
  return {ContainerOrHost(o.container), OwnerJson(o)};
}

// What containers and processes both have, from their GPUs to their peak
// submission rate: the columns, and a row's cells for them.
void AddActivityColumns(std::vector<ReportColumn>* columns) {
  columns->insert(columns->end(),
                  {{"GPUS", "GPUs", "gpus_used", true},
                   {"QUEUES_PEAK", "queues peak", "queues_peak", true},
                   {"COMPUTE_PEAK", "compute peak", "compute_peak", true},
                   {nullptr, "queues peak per GPU", "peak_per_gpu"},
                   {"CREATED", "created", "queues_created", true},
                   {"SUBMISSIONS", "submissions", "submissions", true},
                   {"MEAN/S", "mean per s", "submissions_mean_per_s", true},
                   {"PEAK/S", "peak per s", "submissions_peak_per_s", true}});
}
uint64_t SubmissionsOf(const ProcessRow& r) { return r.submissions; }
uint64_t SubmissionsOf(const ContainerRow& r) { return r.at_end.submissions; }
template <typename Row>
void AddActivityCells(std::vector<ReportCell>* cells, const Row& r) {
  cells->insert(cells->end(),
                {Count(r.gpus_used),
                 Count(r.queues_peak),
                 Count(r.compute_peak),
                 {PerGpuText(r.peak_per_gpu), PerGpuObject(r.peak_per_gpu)},
                 Count(r.queues_created),
                 Count(SubmissionsOf(r)),
                 Rate(r.submissions_mean_per_s),
                 Rate(r.submissions_peak_per_s)});
}

// Their queue pattern (the users' verdict), last: `html` names the column
// in HTML (null: JSON only).
void AddClassColumns(std::vector<ReportColumn>* columns, const char* html) {
  columns->insert(columns->end(), {{nullptr, html, "class"},
                                   {nullptr, nullptr, "verdict"},
                                   {nullptr, nullptr, "compute_class"}});
}
template <typename Row>
void AddClassCells(std::vector<ReportCell>* cells, const Row& r) {
  cells->insert(cells->end(), {Class(r.classification),
                               Text(QueueClassVerdict(r.classification)),
                               Class(r.compute_classification)});
}

// "-" where there is no duration, else FIELD of them.
std::string DurationText(const DurationStats& d, double DurationStats::*field) {
  return d.count == 0 ? "-" : FormatDuration(d.*field);
}

// Submissions per GPU: AQL packets written (gpuq_submissions_total), the
// mean and peak per-bucket rates, and the most pending at once.
ReportTable GpuSubmissions(const RunReport& r) {
  ReportTable t{"gpu_submissions",
                "gpu-submissions",
                "Submissions per GPU",
                "Submissions per GPU",
                "No submission was counted in this run.",
                {{"GPU_ID", "GPU", "gpu_id", true},
                 {"SUBMISSIONS", "submissions", "submissions", true},
                 {"MEAN/S", "mean per s", "mean_per_s", true},
                 {"PEAK/S", "peak per s", "peak_per_s", true},
                 {"PENDING_PEAK", "pending peak", "pending_peak", true}},
                {}};
  for (const GpuSubmissionRow& g : r.gpu_submissions) {
    t.rows.push_back({Count(g.gpu_id), Count(g.submissions), Rate(g.mean_per_s),
                      Rate(g.peak_per_s), Count(g.pending_peak)});
  }
  return t;
}

// A partitioned GPU's partitions summed: which KFD nodes it is, the most
// live queues at once and at the end, the queues created on it, the packets
// written and the busiest second.
ReportTable PhysicalGpus(const RunReport& r) {
  ReportTable t{"physical_gpus",
                "physical-gpus",
                "Physical GPUs",
                "Physical GPUs (each one's partitions summed)",
                "",
                {{"PHYSICAL", "physical GPU", "index", true},
                 {"PCI", "PCI", "pci"},
                 {"PARTITIONS", "partitions", "partitions", true},
                 {"GPU_IDS", "GPU ids", "gpu_ids"},
                 {"QUEUES_PEAK", "queues peak", "queues_peak", true},
                 {"QUEUES_AT_END", "queues at end", "queues_at_end", true},
                 {"CREATED", "created", "created", true},
                 {"SUBMISSIONS", "submissions", "submissions", true},
                 {"MEAN/S", "mean per s", "mean_per_s", true},
                 {"PEAK/S", "peak per s", "peak_per_s", true}},
                {}};
  t.only_with_rows = true;
  for (const PhysicalGpuRow& p : r.physical_gpus) {
    std::string ids;
    for (uint32_t id : p.gpu_ids) {
      ids += fmt::format("{}{}", ids.empty() ? "" : ",", id);
    }
    t.rows.push_back({Count(p.index), Text(p.pci), Count(p.gpu_ids.size()),
                      Text(ids), Count(p.queues_peak), Count(p.at_end),
                      Count(p.created), Count(p.submissions),
                      Rate(p.mean_per_s), Rate(p.peak_per_s)});
  }
  return t;
}

// Submissions per queue, in the order the queues were made (a reused queue
// id has a row per queue): its owner, what it was, the packets written and
// the most pending, the samples that read it and when it was created.
ReportTable QueueSubmissions(const RunReport& r) {
  ReportTable t{"queue_submissions",
                "queue-submissions",
                "Submissions per queue",
                "Submissions per queue",
                "No queue was sampled in this run.",
                {{"CONTAINER", "container", "owner"},
                 {"PID", "pid", "pid", true},
                 {"COMM", nullptr, "comm"},
                 {"GPU_ID", "GPU", "gpu_id", true},
                 {"QUEUE", "queue", "queue_id", true},
                 {"TYPE", "type", "queue_type"},
                 {"SUBMISSIONS", "submissions", "submissions", true},
                 {"PENDING_PEAK", "pending peak", "pending_peak", true},
                 {"SAMPLES", nullptr, "samples", true},
                 {"CREATED_S", "created at (s)", "created_s", true}},
                {}};
  for (const QueueSubmissionRow& q : r.queue_submissions) {
    t.rows.push_back({OwnerCell(q.owner),
                      Count(q.pid),
                      {DashIfEmpty(q.comm), q.comm},
                      Count(q.gpu_id),
                      Count(q.queue_id),
                      Text(q.queue_type),
                      Count(q.submissions),
                      Count(q.pending_peak),
                      Count(q.samples),
                      {fmt::format("{:.3f}", q.created_s), q.created_s}});
  }
  return t;
}

// Hardware queues per (GPU, queue type): how many at once, at the start and
// end, created and destroyed, and the lifetimes of those created and
// destroyed in the run.
ReportTable GpuQueues(const RunReport& r) {
  ReportTable t{"gpu_queues",
                "gpu-queues",
                "Hardware queues",
                "Hardware queues per GPU and queue type",
                "No hardware queue in this run.",
                {{"GPU_ID", "GPU", "gpu_id", true},
                 {"GPU", "name", "gpu_name"},
                 {"TYPE", "queue type", "queue_type"},
                 {"PEAK", "peak", "peak", true},
                 {"AT_START", "at start", "at_start", true},
                 {"AT_END", "at end", "at_end", true},
                 {"CREATED", "created", "created", true},
                 {"DESTROYED", "destroyed", "destroyed", true},
                 {"LIFETIMES", "lifetimes", nullptr, true},
                 {"LIFETIME_P50", "lifetime p50", nullptr, true},
                 {"LIFETIME_P90", "lifetime p90", nullptr, true},
                 {"LIFETIME_MAX", "lifetime max", nullptr, true},
                 {nullptr, nullptr, "lifetime"}},
                {}};
  for (const GpuQueueRow& q : r.gpu_queues) {
    t.rows.push_back({Count(q.gpu_id),
                      {DashIfEmpty(q.gpu_name), q.gpu_name},
                      Text(q.queue_type),
                      Count(q.peak),
                      Count(q.at_start),
                      Count(q.at_end),
                      Count(q.created),
                      Count(q.destroyed),
                      Count(q.lifetime.count),
                      TextOnly(DurationText(q.lifetime, &DurationStats::p50)),
                      TextOnly(DurationText(q.lifetime, &DurationStats::p90)),
                      TextOnly(DurationText(q.lifetime, &DurationStats::max)),
                      JsonOnly(q.lifetime)});
  }
  return t;
}

// Every container that held queues, one row each (the JSON has every
// figure; text and HTML the ones people compare; HTML's verdict table the
// queue pattern).
ReportTable Containers(const RunReport& r) {
  ReportTable t{"containers",
                "containers",
                "Containers",
                "Containers",
                "No container held a queue.",
                {{"CONTAINER", "container", "owner"},
                 {"POD", "pod", nullptr},
                 {"NAMESPACE", "namespace", nullptr},
                 {"ID", "id", "container_id"},
                 {"PROCS", "processes", "processes", true}},
                {}};
  AddActivityColumns(&t.columns);
  t.columns.insert(
      t.columns.end(),
      {{nullptr, "unmaps caused", "preemptions_caused", true},
       {nullptr, "preempted by self", "preempted_by_self", true},
       {nullptr, "preempted by others", "preempted_by_others", true},
       {nullptr, "off GPU", "seconds_off_gpu", true},
       {"EVICTIONS", "evictions", "evictions", true},
       {nullptr, "high-priority queues peak", "high_priority_queues_peak",
        true},
       {nullptr, "CU-restricted queues peak", "cu_restricted_queues_peak",
        true},
       {nullptr, "unsampled queues peak", "unsampled_queues_peak", true},
       {nullptr, "unsampled queues at end", "unsampled_queues_at_end", true},
       {"CREATE_FAILURES", "create failures", "create_failures", true},
       {"EXITS", "exits", "process_exits", true}});
  AddClassColumns(&t.columns, nullptr);
  for (const ContainerRow& c : r.containers) {
    std::vector<ReportCell> cells = {
        OwnerCell(c.owner),
        TextOnly(DashIfEmpty(c.owner.pod)),
        TextOnly(DashIfEmpty(c.owner.ns)),
        {DashIfEmpty(c.container_id.substr(0, 12)), c.container_id},
        Count(c.processes)};
    AddActivityCells(&cells, c);
    cells.insert(cells.end(), {Count(c.at_end.unmaps_caused),
                               Count(c.at_end.preempted_by_self),
                               Count(c.at_end.preempted_by_others),
                               {FormatDuration(c.at_end.OffSeconds()),
                                c.at_end.OffSeconds()},
                               Count(c.at_end.evictions),
                               Count(c.high_priority_peak),
                               Count(c.cu_restricted_peak),
                               Count(c.unsampled_peak),
                               Count(c.at_end.Unsampled()),
                               Count(c.create_failures),
                               Count(c.process_exits)});
    AddClassCells(&cells, c);
    t.rows.push_back(std::move(cells));
  }
  return t;
}

// Every process that held queues, one row each.
ReportTable Processes(const RunReport& r) {
  ReportTable t{"processes",
                "processes",
                "Processes",
                "Processes that held queues",
                "No process held a queue.",
                {{nullptr, nullptr, "owner"},
                 {nullptr, nullptr, "container_id"},
                 {"PID", "pid", "pid", true},
                 {"COMM", "comm", "comm"},
                 {"CONTAINER", "container", nullptr}},
                {}};
  AddActivityColumns(&t.columns);
  t.columns.insert(t.columns.end(), {{"CREATE_FAILURES", "create failures",
                                      "create_failures", true},
                                     {"EXITED", "exited", "exited"}});
  AddClassColumns(&t.columns, "queue pattern");
  t.columns.push_back({"KNOBS", "runtime knobs", "knobs"});
  for (const ProcessRow& p : r.processes) {
    std::vector<ReportCell> cells = {
        JsonOnly(OwnerJson(p.owner)),
        JsonOnly(p.container_id),
        Count(p.pid),
        {DashIfEmpty(p.comm), p.comm},
        TextOnly(ContainerOrHost(p.owner.container))};
    AddActivityCells(&cells, p);
    cells.insert(cells.end(), {Count(p.create_failures), YesNo(p.exited)});
    AddClassCells(&cells, p);
    cells.push_back(KnobsCell(p.knobs));
    t.rows.push_back(std::move(cells));
  }
  return t;
}

// Runlist preemption per (GPU, scheduler): the unmaps and maps with their
// durations, failures and (JSON) the oversubscription figures.
ReportTable Runlist(const RunReport& r) {
  ReportTable t{"runlist",
                "runlist",
                "Runlist (preemption)",
                "Runlist operations per GPU",
                "No runlist operation in this run.",
                {{"GPU_ID", "GPU", "gpu_id", true},
                 {"SCHEDULER", "scheduler", "scheduler"},
                 {"UNMAPS", "unmaps", "unmaps", true},
                 {"UNMAP_P50", "unmap p50", nullptr, true},
                 {"UNMAP_P90", "unmap p90", nullptr, true},
                 {"UNMAP_P99", "unmap p99", nullptr, true},
                 {"UNMAP_MAX", "unmap max", nullptr, true},
                 {nullptr, "unmaps in all", nullptr, true},
                 {"MAPS", "maps", "maps", true},
                 {nullptr, nullptr, "unmap"},
                 {"MAP_P50", "map p50", nullptr, true},
                 {"MAP_P90", "map p90", nullptr, true},
                 {"MAP_P99", "map p99", nullptr, true},
                 {"MAP_MAX", "map max", nullptr, true},
                 {nullptr, nullptr, "map"},
                 {"FAILED", "failures", "failures"},
                 {nullptr, nullptr, "oversubscription"}},
                {}};
  for (const RunlistRow& l : r.runlist) {
    t.rows.push_back(
        {Count(l.gpu_id),
         Text(l.scheduler),
         Count(l.unmaps),
         TextOnly(DurationText(l.unmap, &DurationStats::p50)),
         TextOnly(DurationText(l.unmap, &DurationStats::p90)),
         TextOnly(DurationText(l.unmap, &DurationStats::p99)),
         TextOnly(DurationText(l.unmap, &DurationStats::max)),
         TextOnly(DurationText(l.unmap, &DurationStats::sum)),
         Count(l.maps),
         JsonOnly(l.unmap),
         TextOnly(DurationText(l.map, &DurationStats::p50)),
         TextOnly(DurationText(l.map, &DurationStats::p90)),
         TextOnly(DurationText(l.map, &DurationStats::p99)),
         TextOnly(DurationText(l.map, &DurationStats::max)),
         JsonOnly(l.map),
         // a JSON object, {} when nothing failed
         {DashIfEmpty(JoinCounts(l.failures, ",")), Json(l.failures)},
         JsonOnly(l.oversubscription ? Json(*l.oversubscription) : Json())});
  }
  return t;
}

// Each eviction, from its start to its restore (or the process's exit, or
// the capture's end).
ReportTable Evictions(const RunReport& r) {
  ReportTable t{"eviction_list",
                "eviction-list",
                "Evictions",
                "Each eviction",
                "",
                {{"CONTAINER", "container", "owner"},
                 {"PID", "pid", "pid", true},
                 {"COMM", "comm", "comm"},
                 {"GPU_ID", "GPU", "gpu_id", true},
                 {"TRIGGER", "trigger", "trigger"},
                 {"START_S", "start (s)", "start_s", true},
                 {"DURATION", "duration", "duration_s", true},
                 {nullptr, nullptr, "process_exited"}},
                {}};
  for (const EvictionRow& e : r.eviction_list) {
    ReportCell duration =
        e.duration_s ? ReportCell{FormatDuration(*e.duration_s), *e.duration_s}
        : e.process_exited ? TextOnly("(process exited)")
                           : TextOnly("(not restored)");
    t.rows.push_back({OwnerCell(e.owner),
                      Count(e.pid),
                      {DashIfEmpty(e.comm), e.comm},
                      Count(e.gpu_id),
                      Text(e.trigger),
                      {fmt::format("{:.3f}", e.start_s), e.start_s},
                      std::move(duration),
                      JsonOnly(e.process_exited)});
  }
  return t;
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

// Oversubscription per HWS GPU (text and HTML; the JSON has it in each
// runlist row): the maps whose runlist was oversubscribed, why, how long it
// was and whether it still was at the end.
ReportTable Oversubscription(const RunReport& r) {
  ReportTable t{
      "oversubscription",
      "oversubscription",
      "Runlist oversubscription (HWS time-slicing)",
      "Runlist oversubscription",
      "",
      {{"GPU_ID", "GPU", nullptr, true},
       {"OVERSUBSCRIBED_MAPS", "oversubscribed runlists", nullptr, true},
       {"REASONS", "reasons", nullptr},
       {"OVERSUBSCRIBED", "oversubscribed for", nullptr, true},
       {"AT_END", "at end", nullptr}},
      {},
      // only where a map read its runlist (BTF tiers, HWS): the
      // others cannot tell
      true};
  for (const RunlistRow& l : r.runlist) {
    if (!l.oversubscription) continue;
    const OversubscriptionFigures& o = *l.oversubscription;
    t.rows.push_back({Count(l.gpu_id), Count(o.maps),
                      TextOnly(DashIfEmpty(JoinCounts(o.by_reason, ","))),
                      TextOnly(FormatDuration(o.seconds)), YesNo(o.at_end)});
  }
  return t;
}

// Preemptions caused and suffered per container (text; the JSON and HTML
// have them among each container's figures). Caused: unmaps the container's
// operations ran; suffered: times its queues were taken off a GPU by its
// own operations or others', and the time they were off. Unmaps no process
// caused (a reset, a suspend) get a row of their own.
ReportTable Preemptions(const RunReport& r) {
  ReportTable t{"preemptions",
                "preemptions",
                "Preemptions caused and suffered",
                "",
                "",
                {{"CONTAINER", nullptr, nullptr},
                 {"UNMAPS_CAUSED", nullptr, nullptr},
                 {"PREEMPTED_BY_SELF", nullptr, nullptr},
                 {"PREEMPTED_BY_OTHERS", nullptr, nullptr},
                 {"OFF_GPU", nullptr, nullptr}},
                {}};
  uint64_t attributed = 0;
  for (const ContainerRow& c : r.containers) {
    const RowTotals& end = c.at_end;
    if (end.unmaps_caused == 0 && end.Preempted() == 0) continue;
    t.rows.push_back({OwnerCell(c.owner), Count(end.unmaps_caused),
                      Count(end.preempted_by_self),
                      Count(end.preempted_by_others),
                      TextOnly(FormatDuration(end.OffSeconds()))});
    attributed += end.unmaps_caused;
  }
  if (r.unmaps > attributed) {
    t.rows.push_back({TextOnly("(no process: reset, suspend)"),
                      Count(r.unmaps - attributed), TextOnly("-"),
                      TextOnly("-"), TextOnly("-")});
  }
  return t;
}

// What a priority scheduler works with (text; the JSON and HTML have them
// among each container's figures): the containers whose queues ran at
// amdkfd's high pipe priority or fenced by a CU mask, most at once.
ReportTable Priorities(const RunReport& r) {
  ReportTable t{"priorities",
                "priorities",
                "Queue priorities and CU masks",
                "",
                "",
                {{"CONTAINER", nullptr, nullptr},
                 {"HIGH_PRIORITY_PEAK", nullptr, nullptr},
                 {"CU_RESTRICTED_PEAK", nullptr, nullptr}},
                {}};
  for (const ContainerRow& c : r.containers) {
    if (c.high_priority_peak == 0 && c.cu_restricted_peak == 0) continue;
    t.rows.push_back({OwnerCell(c.owner), Count(c.high_priority_peak),
                      Count(c.cu_restricted_peak)});
  }
  return t;
}

// Each container's queue pattern and what it means for the users' design:
// the HTML's own table (text and markdown list every scope in
// "classification_list", the JSON has both among each container's figures).
ReportTable Verdicts(const RunReport& r) {
  ReportTable t{"verdicts",
                "verdicts",
                "",
                "Queue pattern and the users' verdict, per container",
                "No container held a queue.",
                {{nullptr, "container", nullptr},
                 {nullptr, "pod", nullptr},
                 {nullptr, "namespace", nullptr},
                 {nullptr, "queues peak", nullptr, true},
                 {nullptr, "GPUs", nullptr, true},
                 {nullptr, "queues peak per GPU", nullptr},
                 {nullptr, "queue pattern", nullptr},
                 {nullptr, "verdict", nullptr}},
                {}};
  for (const ContainerRow& c : r.containers) {
    t.rows.push_back({TextOnly(ContainerOrHost(c.owner.container)),
                      TextOnly(DashIfEmpty(c.owner.pod)),
                      TextOnly(DashIfEmpty(c.owner.ns)), Count(c.queues_peak),
                      Count(c.gpus_used), TextOnly(PerGpuText(c.peak_per_gpu)),
                      Class(c.classification),
                      Text(QueueClassVerdict(c.classification))});
  }
  return t;
}

// Where a container's submissions fall short: its live compute queues the
// agent could not read (why: gpuq_unsampled_queues). The JSON has both
// figures among each container's.
ReportTable Unsampled(const RunReport& r) {
  ReportTable t{"unsampled",
                "unsampled",
                "Unsampled queues",
                "Unsampled queues (live queues whose submissions the agent "
                "could not read)",
                "Every queue was sampled: the submissions are complete.",
                {{"CONTAINER", "container", nullptr},
                 {"UNSAMPLED_PEAK", "peak", nullptr, true},
                 {"UNSAMPLED_AT_END", "at the end", nullptr, true}},
                {}};
  t.text_empty = "none, the submissions are complete";
  for (const ContainerRow& c : r.containers) {
    const uint64_t at_end = c.at_end.Unsampled();
    if (c.unsampled_peak == 0 && at_end == 0) continue;
    t.rows.push_back(
        {OwnerCell(c.owner), Count(c.unsampled_peak), Count(at_end)});
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
    ReportCell by =
        p.by ? OwnerCell(*p.by) : TextOnly("(no process: reset, suspend)");
    t.rows.push_back({OwnerCell(p.owner),
                      std::move(by),
                      Count(p.preemptions),
                      {FormatDuration(p.seconds_off_gpu), p.seconds_off_gpu}});
  }
  return t;
}

// Doorbells: per container and GPU, the rings and the packets they
// published by type (more packets than rings: batched submissions, as HIP
// 7's graphs).
ReportTable Doorbells(const RunReport& r) {
  ReportTable t{
      "doorbell_list",
      "doorbells",
      "Doorbells",
      "Doorbell rings and the packets they published",
      "No doorbell ring was counted in this run.",
      {{"CONTAINER", "container", "owner"},
       {"GPU_ID", "GPU", "gpu_id", true},
       {"RINGS", "rings", "rings", true},
       {"PACKETS", "packets", "packets", true},
       {"KERNEL_DISPATCH", "kernel dispatch", "kernel_dispatch", true},
       {"EXT_DISPATCH", "of which AMD extended", "kernel_dispatch_ext", true},
       {"BARRIER_BIT", "of which barrier bit", "barrier_dispatches", true},
       {"BARRIER", "barrier", "barrier", true},
       {"OTHER", "other", "other", true},
       {"UNREADABLE", "unreadable", "unreadable", true}},
      {}};
  for (const DoorbellRow& d : r.doorbell_list) {
    // gpu_id 0: rings on a queue whose create the agent never saw (its
    // series say gpu_id="unknown").
    ReportCell gpu =
        d.gpu_id == 0 ? ReportCell{"unknown", nullptr} : Count(d.gpu_id);
    t.rows.push_back({OwnerCell(d.owner), std::move(gpu), Count(d.rings),
                      Count(d.Packets()), Count(d.kernel_dispatch),
                      Count(d.kernel_dispatch_ext), Count(d.barrier_dispatches),
                      Count(d.barrier), Count(d.other), Count(d.unreadable)});
  }
  return t;
}

// The users' verdict (text; the JSON and HTML have each class among the
// run's, the containers' and the processes' figures): the run, each
// container and each process, with the queues behind its class.
ReportTable Classification(const RunReport& r) {
  ReportTable t{"classification_list",
                "classification",
                "Classification",
                "",
                "",
                {{"SCOPE", nullptr, nullptr},
                 {"NAME", nullptr, nullptr},
                 {"GPUS", nullptr, nullptr},
                 {"QUEUES_PEAK", nullptr, nullptr},
                 {"MAX_PER_GPU", nullptr, nullptr},
                 {"COMPUTE_PEAK", nullptr, nullptr},
                 {"CLASS", nullptr, nullptr},
                 {"COMPUTE_CLASS", nullptr, nullptr},
                 {"VERDICT", nullptr, nullptr}},
                {}};
  const auto add = [&t](const char* scope, std::string name, const auto& row) {
    uint64_t max_per_gpu = 0;
    for (const auto& [gpu, n] : row.peak_per_gpu) {
      max_per_gpu = std::max(max_per_gpu, n);
    }
    t.rows.push_back(
        {TextOnly(scope), TextOnly(std::move(name)), Count(row.gpus_used),
         Count(row.queues_peak), Count(max_per_gpu), Count(row.compute_peak),
         Class(row.classification), Class(row.compute_classification),
         Text(QueueClassVerdict(row.classification))});
  };
  add("run", r.label.empty() ? ShortName(r.name) : r.label, r);
  for (const ContainerRow& c : r.containers) {
    add("container", ContainerOrHost(c.owner.container), c);
  }
  for (const ProcessRow& p : r.processes) {
    add("process",
        fmt::format("{} {} ({})", p.pid, DashIfEmpty(p.comm),
                    p.owner.container.empty() ? "host" : p.owner.container),
        p);
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

std::string FixedSeconds(double seconds) {
  return fmt::format("{:.3f}", seconds);
}

std::string FormatDuration(double seconds) {
  if (seconds < 1e-3) return fmt::format("{:.6g} us", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.6g} ms", seconds * 1e3);
  return fmt::format("{:.10g} s", seconds);
}

std::string PerGpuText(const std::map<uint32_t, uint64_t>& m) {
  std::string s;
  for (const auto& [gpu, n] : m) {
    if (!s.empty()) s += ", ";
    s += fmt::format("{}: {}", gpu, n);
  }
  return DashIfEmpty(s);
}

Json PerGpuObject(const std::map<uint32_t, uint64_t>& m) {
  Json out = Json::object();
  for (const auto& [gpu, n] : m) out[std::to_string(gpu)] = n;
  return out;
}

void to_json(Json& j, const DurationStats& d) {
  j = Json{{"count", d.count}, {"sum_s", d.sum}, {"min_s", d.min},
           {"p50_s", d.p50},   {"p90_s", d.p90}, {"p99_s", d.p99},
           {"max_s", d.max}};
}

void to_json(Json& j, const OversubscriptionFigures& o) {
  j = Json{{"maps", o.maps},
           {"by_reason", o.by_reason},
           {"seconds", o.seconds},
           {"at_end", o.at_end}};
}

Json OwnerJson(const Owner& o) {
  return Json{{"container", o.container}, {"pod", o.pod}, {"namespace", o.ns}};
}

std::vector<size_t> ShownColumns(const ReportTable& t,
                                 const char* ReportColumn::*name) {
  std::vector<size_t> shown;
  for (size_t i = 0; i < t.columns.size(); ++i) {
    if (t.columns[i].*name != nullptr) shown.push_back(i);
  }
  return shown;
}

std::string ShortName(const std::string& name) {
  std::string base = name.substr(name.find_last_of('/') + 1);
  const std::string suffix = ".gpuqcap";
  if (base.size() > suffix.size() &&
      base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0) {
    base.resize(base.size() - suffix.size());
  }
  return base;
}

namespace {

// The directories and file name of `path` ("." and empty ones dropped), the
// file name without ".gpuqcap" (ShortName's rule).
std::vector<std::string> PathParts(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t slash = std::min(path.find('/', start), path.size());
    std::string part = path.substr(start, slash - start);
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
    start = slash + 1;
  }
  if (!parts.empty()) parts.back() = ShortName(parts.back());
  return parts;
}

std::string LastParts(const std::vector<std::string>& parts, size_t n) {
  std::string out;
  for (size_t i = parts.size() - n; i < parts.size(); ++i) {
    out += (out.empty() ? "" : "/") + parts[i];
  }
  return out;
}

}  // namespace

std::vector<std::string> RunLabels(const std::vector<RunReport>& runs) {
  const size_t n = runs.size();
  std::vector<std::vector<std::string>> parts(n);
  std::vector<size_t> depth(n, 1);  // path parts in the label
  for (size_t i = 0; i < n; ++i) parts[i] = PathParts(runs[i].name);
  std::vector<std::string> labels(n);
  auto label_of = [&](size_t i) {
    if (!runs[i].label.empty()) return runs[i].label;
    if (parts[i].empty()) return runs[i].name;  // "/", "."
    return LastParts(parts[i], depth[i]);
  };
  // Every run called alike gets one more directory, while one has any.
  for (bool longer = true; longer;) {
    longer = false;
    std::map<std::string, std::vector<size_t>> alike;
    for (size_t i = 0; i < n; ++i) alike[labels[i] = label_of(i)].push_back(i);
    for (const auto& [label, group] : alike) {
      if (group.size() < 2) continue;
      for (size_t i : group) {
        if (runs[i].label.empty() && depth[i] < parts[i].size()) {
          ++depth[i];
          longer = true;
        }
      }
    }
  }
  std::map<std::string, size_t> seen;
  for (size_t i = 0; i < n; ++i) {
    const size_t k = ++seen[labels[i]];
    if (k > 1) labels[i] += fmt::format(" ({})", k);
  }
  return labels;
}

std::vector<ReportTable> ReportTables(const RunReport& r) {
  std::vector<ReportTable> tables;
  const auto add = [&tables](TableId id, ReportTable t) {
    // In TableId order: the id is the table's place.
    t.id = id;
    tables.push_back(std::move(t));
  };
  add(TableId::kGpuQueues, GpuQueues(r));
  add(TableId::kContainers, Containers(r));
  add(TableId::kProcesses, Processes(r));
  add(TableId::kGpuSubmissions, GpuSubmissions(r));
  add(TableId::kQueueSubmissions, QueueSubmissions(r));
  add(TableId::kRunlist, Runlist(r));
  add(TableId::kOversubscription, Oversubscription(r));
  add(TableId::kPreemptions, Preemptions(r));
  add(TableId::kPreemptedBy, PreemptedBy(r));
  add(TableId::kVerdicts, Verdicts(r));
  add(TableId::kUnsampled, Unsampled(r));
  add(TableId::kPriorities, Priorities(r));
  add(TableId::kEvictions, Evictions(r));
  add(TableId::kCreateFailures, CreateFailures(r));
  add(TableId::kDoorbells, Doorbells(r));
  add(TableId::kClassification, Classification(r));
  add(TableId::kContainerGpusAtEnd, ContainerGpusAtEnd(r));
  add(TableId::kPhysicalGpus, PhysicalGpus(r));
  return tables;
}

const ReportTable* ReportTablePlacement::Take(TableId id) {
  const size_t i = static_cast<size_t>(id);
  if (i >= tables_.size() || taken_[i]) return nullptr;
  taken_[i] = true;
  return &tables_[i];
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
