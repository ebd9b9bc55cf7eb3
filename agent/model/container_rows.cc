#include "model/container_rows.h"

#include <fmt/format.h>

#include <set>

#include "common/text_table.h"
#include "model/queue_column.h"

namespace gpuq {

std::string ContainerOrHost(const std::string& container) {
  return container.empty() ? kHostContainer : container;
}

RowTotals& RowTotals::operator+=(const RowTotals& o) {
  for (const auto& [type, n] : o.live_by_type) live_by_type[type] += n;
  compute += o.compute;
  sdma += o.sdma;
  other += o.other;
  processes += o.processes;
  high_priority += o.high_priority;
  cu_restricted += o.cu_restricted;
  creates += o.creates;
  for (size_t i = 0; i < destroys.size(); ++i) destroys[i] += o.destroys[i];
  submissions += o.submissions;
  pending += o.pending;
  for (size_t i = 0; i < unsampled.size(); ++i) unsampled[i] += o.unsampled[i];
  unmaps_caused += o.unmaps_caused;
  preempted_by_self += o.preempted_by_self;
  preempted_by_others += o.preempted_by_others;
  off_ns += o.off_ns;
  evictions += o.evictions;
  queues_evicted += o.queues_evicted;
  if (o.submission_rate) {
    submission_rate = submission_rate.value_or(0) + *o.submission_rate;
  }
  return *this;
}

uint64_t RowTotals::Unsampled() const {
  uint64_t n = 0;
  for (uint64_t by_reason : unsampled) n += by_reason;
  return n;
}

std::map<CgroupGpu, RowTotals> RowsByCgroupGpu(const Snapshot& s) {
  std::map<CgroupGpu, RowTotals> rows;
  for (const auto& [key, series] : s.queue_series) {
    RowTotals& row = rows[{key.cgroup_id, key.gpu_id}];
    row.live_by_type[key.queue_type] += series.live;
    AddToQueueColumn(key.queue_type, series.live, &row.compute, &row.sdma,
                     &row.other);
    row.creates += series.creates;
    for (size_t i = 0; i < row.destroys.size(); ++i) {
      row.destroys[i] += series.destroys[i];
    }
    row.submissions += series.submissions;
  }
  for (const auto& [key, n] : s.processes) rows[key].processes += n;
  for (const auto& [key, n] : s.queues_by_priority) {
    const auto& [cgroup, gpu, c] = key;
    if (CountsAsHighPriority(c)) rows[{cgroup, gpu}].high_priority += n;
  }
  for (const auto& [key, n] : s.queues_cu_masked) {
    const auto& [cgroup, gpu, c] = key;
    if (CountsAsCuRestricted(c)) rows[{cgroup, gpu}].cu_restricted += n;
  }
  for (const auto& [key, n] : s.pending_packets) rows[key].pending += n;
  for (const auto& [key, n] : s.unsampled_queues) {
    const auto& [cgroup, gpu, why] = key;
    rows[{cgroup, gpu}].unsampled[static_cast<size_t>(why)] += n;
  }
  for (const auto& [key, n] : s.runlist_causes) {
    if (key.unmap) rows[{key.cgroup_id, key.gpu_id}].unmaps_caused += n;
  }
  for (const auto& [key, series] : s.preemptions) {
    RowTotals& row = rows[{key.cgroup_id, key.gpu_id}];
    (key.by_self ? row.preempted_by_self : row.preempted_by_others) +=
        series.preemptions;
    row.off_ns += series.off_ns;
  }
  for (const auto& [key, series] : s.evictions) {
    rows[{key.cgroup_id, key.gpu_id}].evictions += series.evictions;
  }
  for (const auto& [key, n] : s.queues_evicted) rows[key].queues_evicted += n;
  for (const ProcessRow& p : s.process_rows) {
    for (const auto& [gpu, rate] : p.submission_rate_per_gpu) {
      std::optional<double>& sum = rows[{p.cgroup_id, gpu}].submission_rate;
      sum = sum.value_or(0) + rate;
    }
  }
  return rows;
}

std::map<ContainerGpu, RowTotals> ContainerGpuRows(const Snapshot& s) {
  std::map<ContainerGpu, RowTotals> rows;
  for (const auto& [key, totals] : RowsByCgroupGpu(s)) {
    const SeriesLabels& l = s.LabelsOf(key.first);
    rows[{l.container, l.pod, l.ns, key.second}] += totals;
  }
  return rows;
}

std::map<ContainerGpu, RowTotals> ContainerPhysicalGpuRows(
    const Snapshot& s, const std::vector<PhysicalGpu>& physical_gpus) {
  const std::map<uint32_t, uint32_t> physical =
      PhysicalGpuIndexes(physical_gpus);
  auto key_of = [&](uint64_t cgroup_id, uint32_t index) {
    const SeriesLabels& l = s.LabelsOf(cgroup_id);
    return ContainerGpu{l.container, l.pod, l.ns, index};
  };
  std::map<ContainerGpu, RowTotals> rows;
  for (const auto& [key, totals] : RowsByCgroupGpu(s)) {
    const auto p = physical.find(key.second);
    if (p == physical.end()) continue;
    rows[key_of(key.first, p->second)] += totals;
  }
  for (auto& [key, row] : rows) row.processes = 0;
  for (const ProcessRow& proc : s.process_rows) {
    std::set<uint32_t> on;  // the physical GPUs it holds queues on
    for (const auto& [gpu_id, n] : proc.queues_per_gpu) {
      const auto p = physical.find(gpu_id);
      if (n > 0 && p != physical.end()) on.insert(p->second);
    }
    for (uint32_t index : on) ++rows[key_of(proc.cgroup_id, index)].processes;
  }
  return rows;
}

std::map<uint32_t, RowTotals> PhysicalGpuRows(
    const Snapshot& s, const std::vector<PhysicalGpu>& physical_gpus) {
  std::map<uint32_t, RowTotals> rows;
  for (const auto& [key, totals] : ContainerPhysicalGpuRows(s, physical_gpus)) {
    rows[key.gpu_id] += totals;
  }
  return rows;
}

namespace {

// A column whose cell is one count.
template <uint64_t (*kCount)(const RowTotals&)>
RowColumn CountColumn(const char* header, const char* key, const char* help,
                      size_t top_width = 0, int top_drop_rank = 0,
                      RowBreakdown breakdown = RowBreakdown::kNone) {
  return {header,
          key,
          help,
          [](const RowTotals& t) { return std::to_string(kCount(t)); },
          kCount,
          nullptr,
          breakdown,
          top_width,
          top_drop_rank};
}

uint64_t Compute(const RowTotals& t) { return t.compute; }
uint64_t Sdma(const RowTotals& t) { return t.sdma; }
uint64_t Other(const RowTotals& t) { return t.other; }
uint64_t Processes(const RowTotals& t) { return t.processes; }
uint64_t HighPriority(const RowTotals& t) { return t.high_priority; }
uint64_t CuRestricted(const RowTotals& t) { return t.cu_restricted; }
uint64_t Creates(const RowTotals& t) { return t.creates; }
uint64_t Submissions(const RowTotals& t) { return t.submissions; }
uint64_t Pending(const RowTotals& t) { return t.pending; }
uint64_t Unsampled(const RowTotals& t) { return t.Unsampled(); }
uint64_t UnmapsCaused(const RowTotals& t) { return t.unmaps_caused; }
uint64_t Evictions(const RowTotals& t) { return t.evictions; }
uint64_t QueuesEvicted(const RowTotals& t) { return t.queues_evicted; }

}  // namespace

std::string OffSecondsCell(const RowTotals& t) {
  return fmt::format("{:.3f}", t.OffSeconds());
}

const std::vector<RowColumn>& RowColumns() {
  static const std::vector<RowColumn> kColumns = {
      CountColumn<Compute>("COMPUTE", "compute", ""),
      CountColumn<Sdma>("SDMA", "sdma", ""),
      CountColumn<Other>("OTHER", "other", ""),
      CountColumn<Processes>("PROCS", "processes", ""),
      CountColumn<HighPriority>("HIGH_PRIO", "high_priority",
                                "live queues at amdkfd's high pipe priority "
                                "(queue priority 11-15)",
                                9, 11),
      CountColumn<CuRestricted>(
          "CU_RESTRICTED", "cu_restricted",
          "live queues a CU mask fences to a subset of the GPU's CUs", 13, 12),
      CountColumn<Creates>("CREATED", "creates", ""),
      {"DESTROYED(ioctl/exit)", "destroys", "",
       [](const RowTotals& t) {
         return fmt::format("{}/{}", t.destroys[GPUQ_DESTROY_IOCTL],
                            t.destroys[GPUQ_DESTROY_PROCESS_EXIT]);
       },
       nullptr, nullptr, RowBreakdown::kDestroyReason},
      CountColumn<Submissions>("SUBMITTED", "submissions", ""),
      {"SUBMIT/S", "submissions_per_second",
       "AQL packets per second between the last two samples",
       [](const RowTotals& t) { return FormatRate(t.submission_rate); },
       nullptr, [](const RowTotals& t) { return t.submission_rate; }},
      CountColumn<Pending>("PENDING", "pending_packets", ""),
      CountColumn<Unsampled>("UNSAMPLED", "unsampled_queues",
                             "live compute queues whose submissions are not "
                             "counted (why: gpuq_unsampled_queues, --output "
                             "json)",
                             9, 13, RowBreakdown::kUnsampledReason),
      CountColumn<UnmapsCaused>(
          "UNMAPS", "runlist_unmaps_caused",
          "runlist preemptions the container's operations caused"),
      {"PREEMPTED(self/other)", "preempted",
       "times its queues were taken off the GPU, by its own operations and by "
       "others'",
       [](const RowTotals& t) {
         return fmt::format("{}/{}", t.preempted_by_self,
                            t.preempted_by_others);
       },
       nullptr, nullptr, RowBreakdown::kPreemptedCausedBy},
      {"OFF_GPU_S", "seconds_off_gpu", "seconds they were off", OffSecondsCell,
       nullptr,
       [](const RowTotals& t) -> std::optional<double> {
         return t.OffSeconds();
       }},
      CountColumn<Evictions>("EVICTIONS", "evictions", ""),
      CountColumn<QueuesEvicted>(
          "EVICTED", "queues_evicted",
          "live queues whose process is evicted on the GPU (off it until its "
          "restore)",
          8, 14),
  };
  return kColumns;
}

}  // namespace gpuq
