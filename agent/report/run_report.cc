#include "report/run_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <iterator>
#include <tuple>

#include "export/collector.h"

namespace gpuq::report {

bool Owner::operator<(const Owner& o) const {
  return std::tie(container, pod, ns) < std::tie(o.container, o.pod, o.ns);
}

bool Owner::operator==(const Owner& o) const {
  return container == o.container && pod == o.pod && ns == o.ns;
}

namespace {

uint32_t Intern(const std::string& name, std::vector<std::string>* names,
                std::map<std::string, uint32_t>* index) {
  auto [it, fresh] =
      index->try_emplace(name, static_cast<uint32_t>(names->size()));
  if (fresh) names->push_back(name);
  return it->second;
}

}  // namespace

std::vector<double> Series::Dense() const {
  std::vector<double> dense = values;
  dense.resize(size(), 0.0);
  return dense;
}

bool LifetimeKind::operator<(const LifetimeKind& o) const {
  return std::tie(gpu_id, queue_type, end, seeded) <
         std::tie(o.gpu_id, o.queue_type, o.end, o.seeded);
}

std::string Timeline::LifetimeName(const QueueLifetime& l) const {
  std::string name;
  LifetimeName(l, &name);
  return name;
}

void Timeline::LifetimeName(const QueueLifetime& l, std::string* name) const {
  name->clear();
  fmt::format_to(std::back_inserter(*name), "{} queue {}",
                 QueueTypeLabel(lifetime_kinds.at(l.kind).queue_type),
                 l.queue_id);
}

uint32_t Timeline::LifetimeTrack(const std::string& track) {
  return Intern(track, &lifetime_tracks, &track_index_);
}

void Timeline::AddLifetime(QueueLifetime l, uint32_t gpu_id,
                           uint32_t queue_type, const std::string& end,
                           bool seeded) {
  const LifetimeKind kind{gpu_id, queue_type,
                          Intern(end, &lifetime_ends, &end_index_), seeded};
  auto [it, fresh] = kind_index_.try_emplace(
      kind, static_cast<uint32_t>(lifetime_kinds.size()));
  if (fresh) lifetime_kinds.push_back(kind);
  l.kind = it->second;
  queue_lifetimes.push_back(l);
}

Slice Timeline::LifetimeSlice(const QueueLifetime& l) const {
  Slice s;
  s.track = lifetime_tracks.at(l.track);
  s.name = LifetimeName(l);
  s.start_s = l.start_s;
  s.duration_s = l.duration_s;
  ForEachLifetimeArg(l, [&s](std::string_view key, std::string_view value) {
    s.args.emplace(key, value);
  });
  return s;
}

void Timeline::ForEachLifetimeArg(
    const QueueLifetime& l,
    const std::function<void(std::string_view, std::string_view)>& f) const {
  const LifetimeKind& kind = lifetime_kinds.at(l.kind);
  // The numbers in buffers of their own: a writer names 200,000 lifetimes.
  const auto digits = [](char(&buffer)[16], uint32_t v) {
    return std::string_view(
        buffer,
        static_cast<size_t>(
            std::to_chars(buffer, buffer + sizeof buffer, v).ptr - buffer));
  };
  char gpu_id[16];
  char queue_id[16];
  f("end", lifetime_ends.at(kind.end));
  f("gpu_id", digits(gpu_id, kind.gpu_id));
  f("queue_id", digits(queue_id, l.queue_id));
  f("queue_type", QueueTypeLabel(kind.queue_type));
  if (kind.seeded) f("seeded", "true");
}

bool IsUnmap(const Slice& s) {
  return s.name.rfind("unmap", 0) == 0 || s.name.rfind("mes remove", 0) == 0;
}

std::vector<double> UnmapDurations(const RunReport& r) {
  std::vector<double> d;
  for (const auto& s : r.timeline.runlist_ops) {
    if (IsUnmap(s)) d.push_back(s.duration_s);
  }
  std::sort(d.begin(), d.end());
  return d;
}

std::optional<OversubscriptionFigures> OversubscribedTotals(
    const RunReport& r) {
  std::optional<OversubscriptionFigures> total;
  for (const RunlistRow& row : r.runlist) {
    if (!row.oversubscription) continue;
    if (!total) total.emplace();
    total->maps += row.oversubscription->maps;
    total->seconds += row.oversubscription->seconds;
    total->at_end = total->at_end || row.oversubscription->at_end;
    for (const auto& [why, n] : row.oversubscription->by_reason) {
      total->by_reason[why] += n;
    }
  }
  return total;
}

std::pair<uint64_t, double> PreemptedTotals(const RunReport& r) {
  std::pair<uint64_t, double> total{0, 0.0};
  for (const ContainerRow& c : r.containers) {
    total.first += c.at_end.Preempted();
    total.second += c.at_end.OffSeconds();
  }
  return total;
}

std::vector<ComparedPreemption> ComparePreemptions(
    const std::vector<RunReport>& runs) {
  std::map<std::string, ComparedPreemption> by_name;
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const ContainerRow& c : runs[i].containers) {
      const uint64_t n = c.at_end.Preempted();
      const std::string name = ContainerOrHost(c.owner.container);
      ComparedPreemption& row = by_name[name];
      row.container = name;
      row.runs.resize(runs.size());
      // Containers whose labels coincide (two pods' "worker") add up.
      auto& cell = row.runs[i];
      if (!cell) cell.emplace(0, 0.0);
      cell->first += n;
      cell->second += c.at_end.OffSeconds();
    }
  }
  std::vector<ComparedPreemption> out;
  for (auto& [name, row] : by_name) {
    bool preempted = false;
    for (const auto& cell : row.runs) preempted |= cell && cell->first > 0;
    if (preempted) out.push_back(std::move(row));
  }
  return out;
}

double EvictedSeconds(const RunReport& r) {
  double total = 0;
  for (const EvictionRow& e : r.eviction_list)
    total += e.duration_s.value_or(0);
  return total;
}

std::string JoinCounts(const std::map<std::string, uint64_t>& counts,
                       const char* separator) {
  std::string out;
  for (const auto& [what, n] : counts) {
    out += fmt::format("{}{}={}", out.empty() ? "" : separator, what, n);
  }
  return out;
}

const char* QueueClassName(QueueClass c) {
  switch (c) {
    case QueueClass::kNone:
      return "no queues";
    case QueueClass::kSingleQueue:
      return "single queue";
    case QueueClass::kOnePerGpu:
      return "one per GPU";
    case QueueClass::kMoreThanGpus:
      return "more queues than GPUs";
  }
  return "?";
}

const char* QueueClassVerdict(QueueClass c) {
  switch (c) {
    case QueueClass::kNone:
      return "-";
    case QueueClass::kSingleQueue:
      return "design fits";
    case QueueClass::kOnePerGpu:
      return "needs batched suspend/resume";
    case QueueClass::kMoreThanGpus:
      return "needs selective preemption";
  }
  return "?";
}

}  // namespace gpuq::report
