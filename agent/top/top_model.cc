#include "top/top_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "common/log.h"
#include "common/text_table.h"
#include "resolver/gpu_topology.h"

namespace gpuq {
namespace {

std::optional<double> Rate(uint64_t now, uint64_t before, double seconds) {
  // A counter that went down was reset (its series was removed and came
  // back): it counts from zero again.
  const uint64_t delta = now >= before ? now - before : now;
  return static_cast<double>(delta) / seconds;
}

/// The value a row is sorted by (names aside).
double SortValue(const TopRow& row, TopSort sort) {
  switch (sort) {
    case TopSort::kQueues:
      return static_cast<double>(row.totals.Live());
    case TopSort::kSubmitRate:
      return row.submit_rate.value_or(-1);
    case TopSort::kPending:
      return static_cast<double>(row.totals.pending);
    case TopSort::kUnmapRate:
      return row.unmap_rate.value_or(-1);
    case TopSort::kEvictRate:
      return row.evict_rate.value_or(-1);
    case TopSort::kPreemptRate:
      return row.preempt_rate.value_or(-1);
    case TopSort::kName:
      return 0;
  }
  return 0;
}

/// "(host)" for host processes; "trainer (ml-train/trainer-0)" in a pod.
std::string DisplayName(const TopRow& row) {
  std::string name = ContainerOrHost(row.container);
  if (!row.pod.empty()) {
    name += " (" + (row.ns.empty() ? "" : row.ns + "/") + row.pod + ")";
  }
  return name;
}

bool RowBefore(const TopRow& a, const TopRow& b, TopSort sort) {
  if (sort != TopSort::kName) {
    const double va = SortValue(a, sort), vb = SortValue(b, sort);
    if (va != vb) return va > vb;
  }
  const std::string na = DisplayName(a), nb = DisplayName(b);
  if (na != nb) return na < nb;
  if (a.gpu_order != b.gpu_order) return a.gpu_order < b.gpu_order;
  return a.gpu_id < b.gpu_id;
}

void AddRates(TopRow* total, const TopRow& gpu) {
  auto add = [](std::optional<double>* sum, const std::optional<double>& v) {
    if (v) *sum = sum->value_or(0) + *v;
  };
  add(&total->submit_rate, gpu.submit_rate);
  add(&total->unmap_rate, gpu.unmap_rate);
  add(&total->evict_rate, gpu.evict_rate);
  add(&total->preempt_rate, gpu.preempt_rate);
}

/// One column of the screen: its header, width, and when it is left out on
/// a narrow terminal (higher drops first; 0 never).
struct Column {
  const char* header;
  size_t width;
  int drop_rank;
  std::optional<TopSort> sort;
};

// top's own columns (rates between two updates among them), then the row
// model's columns that have a top width (model/container_rows.h).
const std::vector<Column>& Columns() {
  static const std::vector<Column> columns = [] {
    std::vector<Column> list = {
        {"QUEUES", 7, 0, TopSort::kQueues},
        {"COMPUTE", 7, 9, std::nullopt},
        {"SDMA", 5, 8, std::nullopt},
        {"OTHER", 5, 10, std::nullopt},
        {"PROCS", 5, 7, std::nullopt},
        {"SUBMIT/S", 10, 1, TopSort::kSubmitRate},
        {"PENDING", 8, 5, TopSort::kPending},
        {"UNMAPS/S", 9, 2, TopSort::kUnmapRate},
        {"EVICT/S", 8, 4, TopSort::kEvictRate},
        {"PREEMPT/S", 10, 3, TopSort::kPreemptRate},
        {"OFF_S", 8, 6, std::nullopt},
    };
    for (const RowColumn& c : RowColumns()) {
      if (c.top_width > 0) {
        list.push_back({c.header, c.top_width, c.top_drop_rank, std::nullopt});
      }
    }
    return list;
  }();
  return columns;
}

std::vector<std::string> Cells(const TopRow& row) {
  const RowTotals& t = row.totals;
  std::vector<std::string> cells = {
      std::to_string(t.Live()), std::to_string(t.compute),
      std::to_string(t.sdma), std::to_string(t.other),
      std::to_string(t.processes), FormatRate(row.submit_rate),
      std::to_string(t.pending), FormatRate(row.unmap_rate),
      FormatRate(row.evict_rate), FormatRate(row.preempt_rate),
      // Seconds in total: a window's time is credited when its queues are
      // back, so a rate of it would jump past 100% when a long window closes.
      OffSecondsCell(t)};
  for (const RowColumn& c : RowColumns()) {
    if (c.top_width > 0) cells.push_back(c.text(t));
  }
  return cells;
}

std::string Fit(const std::string& text, size_t width) {
  if (text.size() <= width) return text + std::string(width - text.size(), ' ');
  if (width == 0) return "";
  return text.substr(0, width - 1) + "~";
}

/// "capture time: 2023-11-14T22:13:25.300Z   5.300 s of 15.500 s   speed
/// 20x": the wall time the rows shown were recorded at (the capture's clock
/// at the last update), how far into the capture that is, and the pace.
std::string ReplayClockLine(const ReplayClock& clock, const TopModel& model) {
  const CaptureSpan& span = clock.span;
  // Before the first update: the capture's start.
  const uint64_t now = model.NowNs() != 0 ? model.NowNs() : span.first_ns;
  // Wrapping arithmetic: a record stamped before the header's start still
  // lands the right distance before it.
  const auto wall_ns = static_cast<int64_t>(span.start_realtime_ns +
                                            (now - span.start_monotonic_ns));
  const auto wall = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::nanoseconds(wall_ns)));
  auto seconds = [](uint64_t ns) { return static_cast<double>(ns) / 1e9; };
  const double into = now > span.first_ns ? seconds(now - span.first_ns) : 0;
  const double total =
      span.last_ns > span.first_ns ? seconds(span.last_ns - span.first_ns) : 0;
  return fmt::format(
      "capture time: {}   {:.3f} s of {:.3f} s   speed {}", UtcTimestamp(wall),
      into, total,
      clock.speed > 0 ? fmt::format("{:g}x", clock.speed) : std::string("max"));
}

}  // namespace

const std::vector<TopKey>& TopKeys() {
  static const std::vector<TopKey> keys = {
      {"1 .. 7",
       "sort by QUEUES, SUBMIT/S, PENDING, UNMAPS/S, EVICT/S, PREEMPT/S, "
       "NAME"},
      {"s", "next sort key (cycles through the seven)"},
      {"p, space",
       "pause: freeze the rows shown (events are still read); again to "
       "resume"},
      {"?, Esc", "this help; ? again or Esc goes back to the rows"},
      {"q, Q", "quit (exit 0)"},
      {"Ctrl-C", "quit (exit 0)"},
  };
  return keys;
}

const char* TopSortName(TopSort sort) {
  switch (sort) {
    case TopSort::kQueues:
      return "QUEUES";
    case TopSort::kSubmitRate:
      return "SUBMIT/S";
    case TopSort::kPending:
      return "PENDING";
    case TopSort::kUnmapRate:
      return "UNMAPS/S";
    case TopSort::kEvictRate:
      return "EVICT/S";
    case TopSort::kPreemptRate:
      return "PREEMPT/S";
    case TopSort::kName:
      return "NAME";
  }
  return "?";
}

TopSort NextTopSort(TopSort sort) {
  return static_cast<TopSort>((static_cast<int>(sort) + 1) % kTopSortCount);
}

std::string ProbeSummary(const Snapshot& s) {
  if (s.source == "replay") return "replay";
  if (s.probes.empty()) return "none (sysfs only)";
  // The probe tier of each attached hook (btf-fentry, args-kprobe, ...,
  // docs/probe-tiers.md); the mode where a status carries no tier.
  std::set<std::string> modes;
  size_t attached = 0;
  for (const ProbeStatus& p : s.probes) {
    if (!p.attached) continue;
    ++attached;
    modes.insert(p.tier.empty() ? p.mode : p.tier);
  }
  std::string joined;
  for (const std::string& m : modes) joined += (joined.empty() ? "" : "+") + m;
  return fmt::format("{} {}/{}", joined.empty() ? "none" : joined, attached,
                     s.probes.size());
}

void TopModel::Update(const Snapshot& s, uint64_t now_ns) {
  const std::map<uint32_t, uint32_t> order = AmdSmiIndexes(s.gpus);
  std::map<uint32_t, std::string> partition;  // gpu_id -> "P.N"
  std::map<uint32_t, uint32_t> physical_of;   // gpu_id -> P, partitioned
  const std::vector<PhysicalGpu> physical_gpus = PhysicalGpus(s.gpus);
  partitions_.clear();
  for (const PhysicalGpu& p : physical_gpus) {
    if (!p.Partitioned()) continue;
    partitions_[p.index] = static_cast<uint32_t>(p.gpu_ids.size());
    for (uint32_t gpu_id : p.gpu_ids) {
      partition[gpu_id] =
          fmt::format("{}.{}", p.index, s.gpus.at(gpu_id).PartitionId());
      physical_of[gpu_id] = p.index;
    }
  }
  physical_.clear();
  if (!partitions_.empty()) {
    physical_ = ContainerPhysicalGpuRows(s, physical_gpus);
  }
  std::map<ContainerGpu, TopRow> rows;
  for (auto& [key, totals] : ContainerGpuRows(s)) {
    TopRow& r = rows[key];
    r.container = key.container;
    r.pod = key.pod;
    r.ns = key.ns;
    r.gpu_id = key.gpu_id;
    if (auto o = order.find(key.gpu_id); o != order.end()) {
      r.gpu_order = o->second;
    }
    if (auto p = partition.find(key.gpu_id); p != partition.end()) {
      r.partition = p->second;
      r.physical = physical_of.at(key.gpu_id);
    }
    r.totals = std::move(totals);
  }

  now_ns_ = now_ns;
  const bool time_passed = have_previous_ && now_ns > previous_ns_;
  const double seconds =
      time_passed ? static_cast<double>(now_ns - previous_ns_) / 1e9 : 0;
  for (auto& [key, r] : rows) {
    if (time_passed) {
      auto before = previous_.find(key);
      // A row that is new since the last snapshot counted from zero.
      const RowTotals b =
          before != previous_.end() ? before->second : RowTotals{};
      const RowTotals& t = r.totals;
      r.submit_rate = Rate(t.submissions, b.submissions, seconds);
      r.unmap_rate = Rate(t.unmaps_caused, b.unmaps_caused, seconds);
      r.evict_rate = Rate(t.evictions, b.evictions, seconds);
      r.preempt_rate = Rate(t.Preempted(), b.Preempted(), seconds);
    } else if (auto old = rows_.find(key); old != rows_.end()) {
      r.submit_rate = old->second.submit_rate;
      r.unmap_rate = old->second.unmap_rate;
      r.evict_rate = old->second.evict_rate;
      r.preempt_rate = old->second.preempt_rate;
    }
  }
  if (!have_previous_ || time_passed) {
    previous_.clear();
    for (const auto& [key, r] : rows) previous_[key] = r.totals;
    previous_ns_ = now_ns;
    have_previous_ = true;
  }
  rows_ = std::move(rows);

  summary_ = TopSummary{};
  summary_.source = s.source;
  summary_.probes = ProbeSummary(s);
  for (const auto& [key, r] : rows_) summary_.live_queues += r.totals.Live();
  for (uint64_t n : s.events_by_type) summary_.events += n;
  summary_.gpus = s.gpus.size();
  std::set<std::tuple<std::string, std::string, std::string>> containers;
  for (const auto& [key, r] : rows_) {
    containers.emplace(key.container, key.pod, key.ns);
  }
  summary_.containers = containers.size();
  if (!s.oversubscription.empty()) {
    summary_.oversubscribed.emplace();
    for (const auto& [gpu_id, series] : s.oversubscription) {
      if (!series.shape.oversubscribed) continue;
      summary_.oversubscribed->push_back(fmt::format(
          "gpu {} ({})", gpu_id, OversubscribedBecause(series.shape)));
    }
  }
}

std::vector<TopGroup> TopModel::Groups(TopSort sort) const {
  auto before = [sort](const TopRow& a, const TopRow& b) {
    return RowBefore(a, b, sort);
  };
  // A GPU's row, or a physical GPU's row with its partitions' rows.
  struct Unit {
    TopRow head;
    std::vector<TopRow> partitions;
  };
  struct Group {
    TopRow total;
    std::vector<Unit> units;
    std::map<uint32_t, size_t> physical_unit;  // physical index -> unit
  };
  std::map<std::tuple<std::string, std::string, std::string>, Group> groups;
  for (const auto& [key, r] : rows_) {
    Group& g = groups[{r.container, r.pod, r.ns}];
    TopRow& t = g.total;
    t.container = r.container;
    t.pod = r.pod;
    t.ns = r.ns;
    t.totals += r.totals;
    AddRates(&t, r);
    if (!r.physical) {
      g.units.push_back({r, {}});
      continue;
    }
    auto [it, added] = g.physical_unit.emplace(*r.physical, g.units.size());
    if (added) {
      TopRow head;
      head.container = r.container;
      head.pod = r.pod;
      head.ns = r.ns;
      head.physical = r.physical;
      head.partitions = partitions_.at(*r.physical);
      const auto sums = physical_.find({r.container, r.pod, r.ns, *r.physical});
      if (sums != physical_.end()) head.totals = sums->second;
      g.units.push_back({head, {}});
    }
    Unit& u = g.units[it->second];
    u.head.gpu_order = std::min(u.head.gpu_order, r.gpu_order);
    AddRates(&u.head, r);
    u.partitions.push_back(r);
  }
  std::vector<TopGroup> out;
  for (auto& [key, g] : groups) {
    for (Unit& u : g.units) {
      std::sort(u.partitions.begin(), u.partitions.end(), before);
    }
    std::sort(
        g.units.begin(), g.units.end(),
        [&](const Unit& a, const Unit& b) { return before(a.head, b.head); });
    TopGroup group;
    group.total = std::move(g.total);
    for (Unit& u : g.units) {
      group.gpus.push_back(std::move(u.head));
      for (TopRow& p : u.partitions) group.gpus.push_back(std::move(p));
    }
    out.push_back(std::move(group));
  }
  std::sort(out.begin(), out.end(), [&](const TopGroup& a, const TopGroup& b) {
    return before(a.total, b.total);
  });
  return out;
}

std::vector<std::string> RenderTop(const TopModel& model, TopSort sort,
                                   int width, const std::string& status,
                                   size_t* header_line) {
  TopView view;
  view.status = status;
  return RenderTop(model, sort, width, view, header_line);
}

std::vector<std::string> RenderTop(const TopModel& model, TopSort sort,
                                   int width_in, const TopView& view,
                                   size_t* header_line) {
  const size_t width = static_cast<size_t>(std::max(width_in, 20));
  const TopSummary& sum = model.Summary();
  std::vector<std::string> lines;
  lines.push_back(fmt::format(
      "gpuq-agent top   source: {}   probes: {}   sort: {} (s, 1-{})   "
      "? help   q quits",
      sum.source, sum.probes, TopSortName(sort), kTopSortCount));
  std::string oversubscribed;
  if (sum.oversubscribed) {
    oversubscribed = "   oversubscribed: ";
    if (sum.oversubscribed->empty()) oversubscribed += "none";
    for (size_t k = 0; k < sum.oversubscribed->size(); ++k) {
      oversubscribed += (k ? ", " : "") + (*sum.oversubscribed)[k];
    }
  }
  lines.push_back(fmt::format(
      "containers: {}   GPUs: {}   live queues: {}   events: {}{}",
      sum.containers, sum.gpus, sum.live_queues, sum.events, oversubscribed));
  if (view.replay) lines.push_back(ReplayClockLine(*view.replay, model));
  std::string status = view.status;
  if (view.paused) {
    status = "PAUSED: rows frozen, events still read; p or space resumes" +
             (status.empty() ? "" : "   " + status);
  }
  lines.push_back(status);
  lines.push_back("");

  // Which columns fit: the name column keeps at least 16 characters; the
  // sort column is never left out.
  constexpr size_t kMinName = 16;
  std::vector<size_t> shown;
  for (size_t i = 0; i < Columns().size(); ++i) shown.push_back(i);
  auto used = [&] {
    size_t w = kMinName;
    for (size_t i : shown) w += 1 + Columns()[i].width;
    return w;
  };
  while (used() > width) {
    auto victim = shown.end();
    for (auto it = shown.begin(); it != shown.end(); ++it) {
      const Column& c = Columns()[*it];
      if (c.drop_rank == 0 || c.sort == sort) continue;
      if (victim == shown.end() || c.drop_rank > Columns()[*victim].drop_rank) {
        victim = it;
      }
    }
    if (victim == shown.end()) break;
    shown.erase(victim);
  }
  const size_t name_width = std::max(kMinName, width - (used() - kMinName));

  auto line = [&](const std::string& name,
                  const std::vector<std::string>& cells, bool header) {
    std::string out = Fit(name, name_width);
    for (size_t i : shown) {
      std::string cell = cells[i];
      if (header && Columns()[i].sort == sort) cell += "*";
      const size_t w = Columns()[i].width;
      out += " " + std::string(w > cell.size() ? w - cell.size() : 0, ' ') +
             cell.substr(0, w);
    }
    return out.substr(0, width);
  };
  std::vector<std::string> headers;
  for (const Column& c : Columns()) headers.emplace_back(c.header);
  *header_line = lines.size();
  lines.push_back(
      line(sort == TopSort::kName ? "CONTAINER/GPU*" : "CONTAINER/GPU", headers,
           true));
  for (const TopGroup& g : model.Groups(sort)) {
    lines.push_back(line(DisplayName(g.total), Cells(g.total), false));
    for (const TopRow& r : g.gpus) {
      // A physical GPU's row, its partitions under it (each with its
      // physical GPU and partition after the gpu_id), or a GPU's.
      const std::string gpu =
          r.partitions > 0 ? fmt::format("  physical {} ({} parts)",
                                         *r.physical, r.partitions)
          : r.partition.empty()
              ? fmt::format("  gpu {}", r.gpu_id)
              : fmt::format("    gpu {} ({})", r.gpu_id, r.partition);
      lines.push_back(line(gpu, Cells(r), false));
    }
  }
  for (std::string& l : lines) {
    if (l.size() > width) l.resize(width);
  }
  return lines;
}

std::vector<std::string> RenderTopHelp(int width_in) {
  const size_t width = static_cast<size_t>(std::max(width_in, 20));
  std::vector<std::string> lines = {
      "gpuq-agent top: keys   (? or Esc goes back to the rows)", ""};
  size_t keys_width = 0;
  for (const TopKey& k : TopKeys()) {
    keys_width = std::max(keys_width, std::string(k.keys).size());
  }
  for (const TopKey& k : TopKeys()) {
    lines.push_back(fmt::format("  {:<{}}   {}", k.keys, keys_width, k.does));
  }
  lines.push_back("");
  lines.push_back("Columns, rates and the replay clock: docs/top.md");
  for (std::string& l : lines) {
    if (l.size() > width) l.resize(width);
  }
  return lines;
}

}  // namespace gpuq
