#include "report/render_json.h"

#include "report/report_tables.h"

namespace gpuq::report {
namespace {

using Json = nlohmann::ordered_json;

Json Stats(const DurationStats& d) {
  return Json{{"count", d.count}, {"sum_s", d.sum}, {"min_s", d.min},
              {"p50_s", d.p50},   {"p90_s", d.p90}, {"p99_s", d.p99},
              {"max_s", d.max}};
}

// JSON object keys are strings: GPU ids become "11437".
Json PerGpuObject(const std::map<uint32_t, uint64_t>& m) {
  Json out = Json::object();
  for (const auto& [gpu, n] : m) out[std::to_string(gpu)] = n;
  return out;
}

Json SeriesJson(const std::vector<Series>& list) {
  Json out = Json::array();
  for (const Series& s : list) {
    out.push_back(Json{{"name", s.name}, {"values", s.values}});
  }
  return out;
}

Json SlicesJson(const std::vector<Slice>& list) {
  Json out = Json::array();
  for (const Slice& s : list) {
    Json args = Json::object();
    for (const auto& [k, v] : s.args) args[k] = v;
    out.push_back(Json{{"track", s.track},
                       {"name", s.name},
                       {"start_s", s.start_s},
                       {"duration_s", s.duration_s},
                       {"args", args}});
  }
  return out;
}

}  // namespace

nlohmann::ordered_json RunJson(const RunReport& r) {
  Json run;
  run["name"] = r.name;
  run["start_realtime_ns"] = r.start_realtime_ns;
  run["duration_s"] = r.duration_s;
  run["records"] = r.records;
  run["gpus_in_topology"] = r.gpus_in_topology;
  run["gpus_used"] = r.gpus_used;
  run["queues"] = Json{{"peak", r.queues_peak},
                       {"compute_peak", r.compute_peak},
                       {"high_priority_peak", r.high_priority_peak},
                       {"cu_restricted_peak", r.cu_restricted_peak},
                       {"unsampled_peak", r.unsampled_peak},
                       {"peak_per_gpu", PerGpuObject(r.peak_per_gpu)},
                       {"at_start", r.queues_at_start},
                       {"created", r.queues_created},
                       {"destroyed", r.queues_destroyed},
                       {"at_end", r.queues_at_end}};
  run["submissions"] = Json{{"total", r.submissions},
                            {"mean_per_s", r.submissions_mean_per_s},
                            {"peak_per_s", r.submissions_peak_per_s},
                            {"pending_peak", r.pending_peak}};
  run["doorbells"] = r.doorbells;
  run["runlist_totals"] = Json{
      {"unmaps", r.unmaps}, {"maps", r.maps}, {"failures", r.runlist_failures}};
  run["evictions"] = r.evictions;
  run["restores"] = r.restores;
  run["create_failures"] = r.create_failures;
  run["process_exits"] = r.process_exits;
  run["events_dropped"] = r.events_dropped;
  run["events_dropped_by_reason"] = r.events_dropped_by_reason;
  run["classification"] =
      Json{{"class", QueueClassName(r.classification)},
           {"verdict", QueueClassVerdict(r.classification)},
           {"compute_class", QueueClassName(r.compute_classification)},
           {"compute_verdict", QueueClassVerdict(r.compute_classification)}};

  Json containers = Json::array();
  for (const ContainerRow& c : r.containers) {
    containers.push_back(
        Json{{"owner", OwnerJson(c.owner)},
             {"container_id", c.container_id},
             {"processes", c.processes},
             {"gpus_used", c.gpus_used},
             {"queues_peak", c.queues_peak},
             {"compute_peak", c.compute_peak},
             {"peak_per_gpu", PerGpuObject(c.peak_per_gpu)},
             {"queues_created", c.queues_created},
             {"submissions", c.submissions},
             {"submissions_mean_per_s", c.submissions_mean_per_s},
             {"submissions_peak_per_s", c.submissions_peak_per_s},
             {"preemptions_caused", c.preemptions_caused},
             {"preempted_by_self", c.preempted_by_self},
             {"preempted_by_others", c.preempted_by_others},
             {"seconds_off_gpu", c.seconds_off_gpu},
             {"evictions", c.evictions},
             {"high_priority_queues_peak", c.high_priority_peak},
             {"cu_restricted_queues_peak", c.cu_restricted_peak},
             {"unsampled_queues_peak", c.unsampled_peak},
             {"unsampled_queues_at_end", c.unsampled_at_end},
             {"create_failures", c.create_failures},
             {"process_exits", c.process_exits},
             {"class", QueueClassName(c.classification)},
             {"verdict", QueueClassVerdict(c.classification)},
             {"compute_class", QueueClassName(c.compute_classification)}});
  }
  run["containers"] = containers;

  Json processes = Json::array();
  for (const ProcessRow& p : r.processes) {
    processes.push_back(
        Json{{"owner", OwnerJson(p.owner)},
             {"container_id", p.container_id},
             {"pid", p.pid},
             {"comm", p.comm},
             {"gpus_used", p.gpus_used},
             {"queues_peak", p.queues_peak},
             {"compute_peak", p.compute_peak},
             {"peak_per_gpu", PerGpuObject(p.peak_per_gpu)},
             {"queues_created", p.queues_created},
             {"submissions", p.submissions},
             {"submissions_mean_per_s", p.submissions_mean_per_s},
             {"submissions_peak_per_s", p.submissions_peak_per_s},
             {"create_failures", p.create_failures},
             {"exited", p.exited},
             {"class", QueueClassName(p.classification)},
             {"verdict", QueueClassVerdict(p.classification)},
             {"compute_class", QueueClassName(p.compute_classification)}});
  }
  run["processes"] = processes;

  Json gpu_queues = Json::array();
  for (const GpuQueueRow& q : r.gpu_queues) {
    gpu_queues.push_back(Json{{"gpu_id", q.gpu_id},
                              {"gpu_name", q.gpu_name},
                              {"queue_type", q.queue_type},
                              {"peak", q.peak},
                              {"at_start", q.at_start},
                              {"at_end", q.at_end},
                              {"created", q.created},
                              {"destroyed", q.destroyed},
                              {"lifetime", Stats(q.lifetime)}});
  }
  run["gpu_queues"] = gpu_queues;

  Json gpu_submissions = Json::array();
  for (const GpuSubmissionRow& g : r.gpu_submissions) {
    gpu_submissions.push_back(Json{{"gpu_id", g.gpu_id},
                                   {"submissions", g.submissions},
                                   {"mean_per_s", g.mean_per_s},
                                   {"peak_per_s", g.peak_per_s},
                                   {"pending_peak", g.pending_peak}});
  }
  run["gpu_submissions"] = gpu_submissions;

  Json queue_submissions = Json::array();
  for (const QueueSubmissionRow& q : r.queue_submissions) {
    queue_submissions.push_back(Json{{"owner", OwnerJson(q.owner)},
                                     {"pid", q.pid},
                                     {"comm", q.comm},
                                     {"gpu_id", q.gpu_id},
                                     {"queue_id", q.queue_id},
                                     {"queue_type", q.queue_type},
                                     {"submissions", q.submissions},
                                     {"pending_peak", q.pending_peak},
                                     {"samples", q.samples}});
  }
  run["queue_submissions"] = queue_submissions;

  Json runlist = Json::array();
  for (const RunlistRow& l : r.runlist) {
    Json failures = Json::object();
    for (const auto& [what, n] : l.failures) failures[what] = n;
    Json oversubscription = nullptr;
    if (l.oversubscription) {
      oversubscription = Json{{"maps", l.oversubscription->maps},
                              {"by_reason", l.oversubscription->by_reason},
                              {"seconds", l.oversubscription->seconds},
                              {"at_end", l.oversubscription->at_end}};
    }
    runlist.push_back(Json{{"gpu_id", l.gpu_id},
                           {"scheduler", l.scheduler},
                           {"unmaps", l.unmaps},
                           {"maps", l.maps},
                           {"unmap", Stats(l.unmap)},
                           {"map", Stats(l.map)},
                           {"failures", failures},
                           {"oversubscription", oversubscription}});
  }
  run["runlist"] = runlist;

  Json evictions = Json::array();
  for (const EvictionRow& e : r.eviction_list) {
    evictions.push_back(
        Json{{"owner", OwnerJson(e.owner)},
             {"pid", e.pid},
             {"comm", e.comm},
             {"gpu_id", e.gpu_id},
             {"trigger", e.trigger},
             {"start_s", e.start_s},
             {"duration_s", e.duration_s ? Json(*e.duration_s) : Json()},
             {"process_exited", e.process_exited}});
  }
  run["eviction_list"] = evictions;

  ReportTablePlacement tables(r);
  const auto add = [&run](const ReportTable* t) {
    if (t == nullptr) return;
    Json rows = Json::array();
    for (const auto& row : t->rows) {
      Json object = Json::object();
      for (size_t i = 0; i < row.size() && i < t->columns.size(); ++i) {
        object[t->columns[i].json] = row[i].json;
      }
      rows.push_back(std::move(object));
    }
    run[t->key] = std::move(rows);
  };
  add(tables.Take("create_failure_list"));
  for (const ReportTable* t : tables.Rest()) add(t);

  const Timeline& t = r.timeline;
  run["timeline"] = Json{{"step_s", t.step_s},
                         {"queues_per_gpu", SeriesJson(t.queues_per_gpu)},
                         {"submission_rate_per_container",
                          SeriesJson(t.submission_rate_per_container)},
                         {"submission_rate_per_process",
                          SeriesJson(t.submission_rate_per_process)},
                         {"queue_lifetimes", SlicesJson(t.queue_lifetimes)},
                         {"runlist_ops", SlicesJson(t.runlist_ops)},
                         {"evictions", SlicesJson(t.evictions)},
                         {"off_gpu", SlicesJson(t.off_gpu)},
                         {"oversubscribed", SlicesJson(t.oversubscribed)},
                         {"slices_omitted", t.slices_omitted}};
  return run;
}

std::string RenderJson(const std::vector<RunReport>& runs) {
  Json out;
  out["schema"] = kReportSchema;
  out["runs"] = Json::array();
  for (const RunReport& r : runs) out["runs"].push_back(RunJson(r));
  // Names come from the kernel (comm), cgroup paths and captures: invalid
  // UTF-8 is replaced (U+FFFD), never thrown as type_error 316.
  return out.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace gpuq::report
