#include "report/headline.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cmath>
#include <ctime>
#include <optional>

#include "common/text_table.h"
#include "report/report_tables.h"
#include "report/svg_chart.h"

namespace gpuq::report {
namespace {

// A figure's members of the run's JSON object.
using Members = nlohmann::ordered_json;
using svg::FormatNumber;
using svg::FormatSeconds;

std::string N(uint64_t n) { return std::to_string(n); }

std::string Utc(uint64_t realtime_ns) {
  const auto t = static_cast<std::time_t>(realtime_ns / 1000000000ull);
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(t));
}

// "0", or "5 (unknown_queue 3, prog_skipped 2)": the reasons as
// gpuq_events_dropped_total labels them.
std::string DroppedText(const RunReport& r) {
  std::string text = N(r.events_dropped);
  const char* sep = " (";
  for (const auto& [reason, n] : r.events_dropped_by_reason) {
    text += fmt::format("{}{} {}", sep, reason, n);
    sep = ", ";
  }
  return r.events_dropped_by_reason.empty() ? text : text + ")";
}

}  // namespace

std::vector<HeadlineFigure> Headline(const RunReport& r) {
  std::vector<HeadlineFigure> h;
  h.push_back({"", "", Members{{"name", r.name}}, {}});
  h.push_back({"capture started",
               Utc(r.start_realtime_ns),
               Members{{"start_realtime_ns", r.start_realtime_ns}},
               {}});
  h.push_back(
      {"duration",
       fmt::format("{} s ({} records)", FixedSeconds(r.duration_s), r.records),
       Members{{"duration_s", r.duration_s}, {"records", r.records}},
       {{"duration", FormatSeconds(r.duration_s),
         fmt::format("{} records", r.records)}}});
  // A partitioned GPU's partitions are GPUs of their own to KFD (and to
  // every per-GPU figure); the physical ones are said beside them.
  const bool partitioned = r.physical_gpus_in_topology != r.gpus_in_topology;
  h.push_back(
      {"GPUs",
       partitioned
           ? fmt::format("{} in topology ({} physical, partitioned), {} "
                         "with queues (on {} physical)",
                         r.gpus_in_topology, r.physical_gpus_in_topology,
                         r.gpus_used, r.physical_gpus_used)
           : fmt::format("{} in topology, {} with queues", r.gpus_in_topology,
                         r.gpus_used),
       Members{{"gpus_in_topology", r.gpus_in_topology},
               {"gpus_used", r.gpus_used},
               {"physical_gpus_in_topology", r.physical_gpus_in_topology},
               {"physical_gpus_used", r.physical_gpus_used}},
       {{"GPUs used", N(r.gpus_used),
         fmt::format("of {} in the topology", r.gpus_in_topology)}}});
  // The JSON lists them under "containers" and "processes".
  h.push_back({"containers, processes",
               fmt::format("{}, {}", r.containers.size(), r.processes.size()),
               Members::object(),
               {}});
  h.push_back(
      {"hardware queues",
       fmt::format("peak {} (compute {}), at start {}, created {}, "
                   "destroyed {}, at end {}",
                   r.queues_peak, r.compute_peak, r.queues_at_start,
                   r.queues_created, r.queues_destroyed, r.queues_at_end),
       Members{
           {"queues", Members{{"peak", r.queues_peak},
                              {"compute_peak", r.compute_peak},
                              {"high_priority_peak", r.high_priority_peak},
                              {"cu_restricted_peak", r.cu_restricted_peak},
                              {"unsampled_peak", r.unsampled_peak},
                              {"peak_per_gpu", PerGpuObject(r.peak_per_gpu)},
                              {"at_start", r.queues_at_start},
                              {"created", r.queues_created},
                              {"destroyed", r.queues_destroyed},
                              {"at_end", r.queues_at_end}}}},
       {{"hardware queues, peak", N(r.queues_peak),
         fmt::format("{} live at the end", r.queues_at_end)},
        {"queues created", N(r.queues_created),
         fmt::format("{} destroyed", r.queues_destroyed)}}});
  h.push_back(
      {"submissions",
       fmt::format("{} (mean {}/s, peak {}/s)", r.submissions,
                   FormatRate(r.submissions_mean_per_s),
                   FormatRate(r.submissions_peak_per_s)),
       Members{{"submissions", Members{{"total", r.submissions},
                                       {"mean_per_s", r.submissions_mean_per_s},
                                       {"peak_per_s", r.submissions_peak_per_s},
                                       {"pending_peak", r.pending_peak}}}},
       {{"submissions (AQL packets)", FormatNumber(r.submissions),
         fmt::format("mean {}/s, peak {}/s",
                     FormatNumber(std::round(r.submissions_mean_per_s)),
                     FormatNumber(std::round(r.submissions_peak_per_s)))}}});
  // In the JSON under "queues" and "submissions" above.
  h.push_back(
      {"unsampled queues peak", N(r.unsampled_peak), Members::object(), {}});
  h.push_back({"pending packets peak",
               N(r.pending_peak),
               Members::object(),
               {{"pending packets, peak", N(r.pending_peak),
                 fmt::format("{} doorbells", r.doorbells)}}});
  h.push_back(
      {"doorbells", N(r.doorbells), Members{{"doorbells", r.doorbells}}, {}});
  const std::vector<double> unmaps = UnmapDurations(r);
  h.push_back(
      {"runlist",
       fmt::format("{} unmaps, {} maps, {} failed", r.unmaps, r.maps,
                   r.runlist_failures),
       Members{{"runlist_totals", Members{{"unmaps", r.unmaps},
                                          {"maps", r.maps},
                                          {"failures", r.runlist_failures}}}},
       {{"runlist unmaps", N(r.unmaps),
         unmaps.empty() ? fmt::format("{} maps", r.maps)
                        : fmt::format("slowest {}, {} maps",
                                      FormatSeconds(unmaps.back()), r.maps)}}});
  // The users' question at a glance: how often queues were taken off a GPU
  // (summed over the containers that held them), for how long, and whether
  // a scheduler time-sliced an oversubscribed runlist ("Preemptions caused
  // and suffered", "Who preempted whom" and "Runlist oversubscription" say
  // whose and where).
  const auto [preempted, off_s] = PreemptedTotals(r);
  h.push_back(
      {"queues preempted",
       fmt::format("{} (per container), {} off the GPU", preempted,
                   FormatSeconds(off_s)),
       Members{{"preemptions",
                Members{{"suffered", preempted}, {"seconds_off_gpu", off_s}}}},
       {{"queues taken off the GPU", N(preempted),
         fmt::format("{} off, summed per container", FormatSeconds(off_s))}}});
  // None: no map read a runlist (a BTF-free tier, an older capture).
  const std::optional<OversubscriptionFigures> over = OversubscribedTotals(r);
  h.push_back(
      {"oversubscribed",
       over ? fmt::format("{} runlist{}, {} (per GPU)", over->maps,
                          over->maps == 1 ? "" : "s",
                          FormatSeconds(over->seconds))
            : "- (no map read its runlist)",
       Members{{"oversubscription", over ? Members(*over) : Members(nullptr)}},
       {{"oversubscribed runlists", over ? N(over->maps) : "-",
         over ? fmt::format("{} oversubscribed, per GPU",
                            FormatSeconds(over->seconds))
              : "no map read its runlist"}}});
  const double evicted_s = EvictedSeconds(r);
  h.push_back(
      {"evictions",
       fmt::format("{} ({} restores, {} s evicted)", r.evictions, r.restores,
                   FixedSeconds(evicted_s)),
       Members{{"evictions", r.evictions}, {"restores", r.restores}},
       {{"evictions", N(r.evictions),
         fmt::format("{} evicted in total", FormatSeconds(evicted_s))}}});
  h.push_back({"create failures",
               N(r.create_failures),
               Members{{"create_failures", r.create_failures}},
               {{"queue create failures", N(r.create_failures),
                 fmt::format("{} process exits", r.process_exits)}}});
  h.push_back({"process exits",
               N(r.process_exits),
               Members{{"process_exits", r.process_exits}},
               {}});
  h.push_back(
      {"events dropped",
       DroppedText(r),
       Members{{"events_dropped", r.events_dropped},
               {"events_dropped_by_reason", r.events_dropped_by_reason}},
       {}});
  h.push_back(
      {"classification",
       QueueClassName(r.classification),
       Members{
           {"classification",
            Members{{"class", QueueClassName(r.classification)},
                    {"verdict", QueueClassVerdict(r.classification)},
                    {"compute_class", QueueClassName(r.compute_classification)},
                    {"compute_verdict",
                     QueueClassVerdict(r.compute_classification)}}}},
       {}});
  // In the JSON's "classification" above; the HTML's verdict box says it.
  h.push_back(
      {"verdict", QueueClassVerdict(r.classification), Members::object(), {}});
  h.push_back({"compute queues only",
               fmt::format("{}: {}", QueueClassName(r.compute_classification),
                           QueueClassVerdict(r.compute_classification)),
               Members::object(),
               {}});
  return h;
}

}  // namespace gpuq::report
