#include "report/comparison.h"

#include <fmt/format.h>

#include <set>
#include <utility>

#include "common/text_table.h"
#include "report/report_tables.h"
#include "sources/runtime_knobs.h"

namespace gpuq::report {
namespace {

// Seconds in the unit that keeps digits short, as the run's own tables
// print them ("9.6 ms"); none at all is "0".
std::string Took(double seconds) {
  return seconds == 0 ? "0" : FormatDuration(seconds);
}

// The distinct knob sets of the run's processes that read, "; "-joined
// ("none": read, none set; "-": no process's environment was read).
std::string KnobsOfRun(const RunReport& r) {
  std::set<std::string> seen;
  for (const ProcessRow& p : r.processes) {
    if (p.knobs) seen.insert(RuntimeKnobsText(p.knobs));
  }
  std::string out;
  for (const std::string& k : seen) out += (out.empty() ? "" : "; ") + k;
  return out.empty() ? "-" : out;
}

// Kernel dispatches the doorbells published, and those with the barrier bit.
std::pair<uint64_t, uint64_t> DoorbellDispatches(const RunReport& r) {
  uint64_t dispatches = 0;
  uint64_t barrier = 0;
  for (const DoorbellRow& d : r.doorbell_list) {
    dispatches += d.kernel_dispatch;
    barrier += d.barrier_dispatches;
  }
  return {dispatches, barrier};
}

}  // namespace

std::vector<ComparisonRow> ComparisonRows(const std::vector<RunReport>& runs) {
  std::vector<ComparisonRow> out;
  const auto row = [&](std::string what, auto cell) {
    ComparisonRow r{std::move(what), {}};
    for (const RunReport& run : runs) r.cells.push_back(cell(run));
    out.push_back(std::move(r));
  };
  row("duration (s)",
      [](const RunReport& r) { return FixedSeconds(r.duration_s); });
  row("records", [](const RunReport& r) { return std::to_string(r.records); });
  row("GPUs with queues",
      [](const RunReport& r) { return std::to_string(r.gpus_used); });
  row("containers",
      [](const RunReport& r) { return std::to_string(r.containers.size()); });
  row("processes",
      [](const RunReport& r) { return std::to_string(r.processes.size()); });
  row("runtime knobs", [](const RunReport& r) { return KnobsOfRun(r); });
  row("queues peak",
      [](const RunReport& r) { return std::to_string(r.queues_peak); });
  row("compute queues peak",
      [](const RunReport& r) { return std::to_string(r.compute_peak); });
  row("queues created",
      [](const RunReport& r) { return std::to_string(r.queues_created); });
  row("queues destroyed",
      [](const RunReport& r) { return std::to_string(r.queues_destroyed); });
  row("queues at end",
      [](const RunReport& r) { return std::to_string(r.queues_at_end); });
  row("submissions",
      [](const RunReport& r) { return std::to_string(r.submissions); });
  row("submissions mean/s",
      [](const RunReport& r) { return FormatRate(r.submissions_mean_per_s); });
  row("submissions peak/s",
      [](const RunReport& r) { return FormatRate(r.submissions_peak_per_s); });
  row("kernel dispatches (doorbells)", [](const RunReport& r) {
    return std::to_string(DoorbellDispatches(r).first);
  });
  row("  with the barrier bit", [](const RunReport& r) {
    const auto [dispatches, barrier] = DoorbellDispatches(r);
    return dispatches == 0 ? std::to_string(barrier)
                           : fmt::format("{} ({:.0f}%)", barrier,
                                         100.0 * static_cast<double>(barrier) /
                                             static_cast<double>(dispatches));
  });
  row("pending packets peak",
      [](const RunReport& r) { return std::to_string(r.pending_peak); });
  row("runlist unmaps",
      [](const RunReport& r) { return std::to_string(r.unmaps); });
  row("runlist maps",
      [](const RunReport& r) { return std::to_string(r.maps); });
  row("runlist failures",
      [](const RunReport& r) { return std::to_string(r.runlist_failures); });
  row("slowest unmap", [](const RunReport& r) {
    const std::vector<double> d = UnmapDurations(r);
    return d.empty() ? std::string("-") : FormatDuration(d.back());
  });
  row("queues preempted (per container)", [](const RunReport& r) {
    return std::to_string(PreemptedTotals(r).first);
  });
  row("off GPU (per container)",
      [](const RunReport& r) { return Took(PreemptedTotals(r).second); });
  // Each container preempted in some run, matched by name: "-" where it
  // did not run.
  for (const ComparedPreemption& c : ComparePreemptions(runs)) {
    ComparisonRow preempted{"  " + c.container + ": preempted, off GPU", {}};
    for (const auto& cell : c.runs) {
      preempted.cells.push_back(
          cell ? std::to_string(cell->first) + ", " + Took(cell->second) : "-");
    }
    out.push_back(std::move(preempted));
  }
  // Summed over the HWS GPUs whose maps read their runlist; "-" for a run
  // none did (a BTF-free tier, an older capture).
  row("oversubscribed runlists", [](const RunReport& r) {
    const auto total = OversubscribedTotals(r);
    return total ? std::to_string(total->maps) : std::string("-");
  });
  row("oversubscribed (per GPU)", [](const RunReport& r) {
    const auto total = OversubscribedTotals(r);
    return total ? Took(total->seconds) : std::string("-");
  });
  row("high-priority queues peak",
      [](const RunReport& r) { return std::to_string(r.high_priority_peak); });
  row("CU-restricted queues peak",
      [](const RunReport& r) { return std::to_string(r.cu_restricted_peak); });
  row("unsampled queues peak",
      [](const RunReport& r) { return std::to_string(r.unsampled_peak); });
  row("evictions",
      [](const RunReport& r) { return std::to_string(r.evictions); });
  row("evicted", [](const RunReport& r) { return Took(EvictedSeconds(r)); });
  row("create failures",
      [](const RunReport& r) { return std::to_string(r.create_failures); });
  row("process exits",
      [](const RunReport& r) { return std::to_string(r.process_exits); });
  row("compute-only class", [](const RunReport& r) {
    return std::string(QueueClassName(r.compute_classification));
  });
  row("classification", [](const RunReport& r) {
    return std::string(QueueClassName(r.classification));
  });
  row("verdict", [](const RunReport& r) {
    return std::string(QueueClassVerdict(r.classification));
  });
  return out;
}

}  // namespace gpuq::report
