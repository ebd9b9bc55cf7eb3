#include "report/render_perfetto.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <sstream>
#include <unordered_map>

#include "model/container_rows.h"
#include "report/json_stream.h"

namespace gpuq::report {
namespace {

using Json = nlohmann::ordered_json;

constexpr double kUs = 1e6;  // trace-event times are microseconds

// Writes each trace event as it is made, in the compact form one
// document's dump() would give it: the trace is never held whole. The
// frequent events (slices and counters) are written member by member, no
// json value made per event.
class Trace {
 public:
  explicit Trace(std::ostream& out) : out_(out) {}

  void Metadata(int pid, int tid, const char* what, const char* key,
                Json value) {
    Put({{"name", what},
         {"ph", "M"},
         {"ts", 0},
         {"pid", pid},
         {"tid", tid},
         {"args", {{key, std::move(value)}}}});
  }
  void ProcessName(int pid, const std::string& name, int sort) {
    Metadata(pid, 0, "process_name", "name", name);
    Metadata(pid, 0, "process_sort_index", "sort_index", sort);
  }
  void ThreadName(int pid, int tid, const std::string& name) {
    Metadata(pid, tid, "thread_name", "name", name);
    Metadata(pid, tid, "thread_sort_index", "sort_index", tid);
  }
  void Complete(int pid, int tid, const char* cat, const Slice& s) {
    Complete(pid, tid, cat, s.name, s.start_s, s.duration_s,
             [&s](const auto& emit) {
               for (const auto& [k, v] : s.args) emit(k, v);
             });
  }
  /// An X event; `each_arg(emit)` calls emit(key, value) for each of its
  /// args in key order (a queue lifetime's from its words: no Slice made).
  template <typename EachArg>
  void Complete(int pid, int tid, const char* cat, const std::string& name,
                double start_s, double duration_s, EachArg each_arg) {
    Begin();
    out_ << R"({"name":)";
    out_.String(name) << R"(,"cat":)";
    out_.String(cat) << R"(,"ph":"X","ts":)";
    out_.Number(start_s * kUs) << R"(,"dur":)";
    out_.Number(duration_s * kUs) << R"(,"pid":)";
    out_.Int(pid) << R"(,"tid":)";
    out_.Int(tid) << R"(,"args":{)";
    bool first = true;
    each_arg([&](const std::string& key, const std::string& value) {
      if (!first) out_ << ',';
      first = false;
      out_.String(key) << ':';
      out_.String(value);
    });
    out_ << "}}";
  }
  /// A C event; its name and series key as JsonStream::Quoted() gives
  /// them (a counter's are written thousands of times, escaped once).
  void Counter(int pid, const std::string& quoted_name, double ts_s,
               const std::string& quoted_series, double value) {
    Begin();
    out_ << R"({"name":)" << quoted_name << R"(,"ph":"C","ts":)";
    out_.Number(ts_s * kUs) << R"(,"pid":)";
    out_.Int(pid) << R"(,"tid":0,"args":{)" << quoted_series << ':';
    out_.Number(value) << "}}";
  }
  /// Text outside the events (the document's start and end).
  JsonStream& out() { return out_; }

 private:
  void Begin() {
    if (events_++ > 0) out_ << ',';
  }
  void Put(const Json& event) {
    Begin();
    out_.Value(event);
  }
  JsonStream out_;
  uint64_t events_ = 0;
};

// Threads of one process: slices of one group go to the first lane (thread)
// where they do not overlap an earlier slice, so X events never cross.
class Lanes {
 public:
  Lanes(Trace& trace, int pid) : trace_(trace), pid_(pid) {}
  void Add(const std::string& group, const char* cat,
           std::vector<const Slice*> slices) {
    Add(group, std::move(slices),
        [&](int tid, const Slice& s) { trace_.Complete(pid_, tid, cat, s); });
  }
  /// Spans of any type with start_s and duration_s, each written by
  /// `write(tid, span)` once its lane is known.
  template <typename Span, typename Write>
  void Add(const std::string& group, std::vector<const Span*> slices,
           Write write) {
    std::stable_sort(
        slices.begin(), slices.end(),
        [](const Span* a, const Span* b) { return a->start_s < b->start_s; });
    std::vector<std::pair<int, double>> lanes;  // tid, end of its last slice
    for (const Span* s : slices) {
      auto lane = std::find_if(lanes.begin(), lanes.end(), [&](const auto& l) {
        return l.second <= s->start_s;
      });
      if (lane == lanes.end()) {
        const int tid = ++next_tid_;
        trace_.ThreadName(
            pid_, tid,
            lanes.empty()
                ? group
                : group + " (" + std::to_string(lanes.size() + 1) + ")");
        lanes.emplace_back(tid, 0);
        lane = lanes.end() - 1;
      }
      lane->second = s->start_s + s->duration_s;
      write(lane->first, *s);
    }
  }

 private:
  Trace& trace_;
  int pid_;
  int next_tid_ = 0;
};

void AddRun(Trace& trace, const RunReport& r, int base) {
  const auto& t = r.timeline;
  const std::string prefix = r.name + ": ";
  // GPUs: every track name a GPU series or slice uses, one process each.
  std::set<std::string> gpus;
  for (const auto& s : t.queues_per_gpu) gpus.insert(s.name);
  for (const auto& s : t.runlist_ops) gpus.insert(s.track);
  for (const auto& s : t.evictions) gpus.insert(s.track);
  for (const auto& s : t.off_gpu) gpus.insert(s.track);
  for (const auto& s : t.oversubscribed) gpus.insert(s.track);
  std::map<std::string, int> gpu_pid;
  int next = base + 1;
  for (const auto& g : gpus) {
    gpu_pid[g] = next;
    trace.ProcessName(next, prefix + g, next - base);
    ++next;
  }
  for (const auto& g : gpus) {
    Lanes lanes(trace, gpu_pid[g]);
    std::vector<const Slice*> ops, evictions, off, oversubscribed;
    for (const auto& s : t.runlist_ops) {
      if (s.track == g) ops.push_back(&s);
    }
    for (const auto& s : t.evictions) {
      if (s.track == g) evictions.push_back(&s);
    }
    for (const auto& s : t.off_gpu) {
      if (s.track == g) off.push_back(&s);
    }
    for (const auto& s : t.oversubscribed) {
      if (s.track == g) oversubscribed.push_back(&s);
    }
    lanes.Add("runlist", "runlist", std::move(ops));
    lanes.Add("oversubscribed", "oversubscription", std::move(oversubscribed));
    lanes.Add("evictions", "eviction", std::move(evictions));
    // A lane per container whose queues the runlist took off.
    std::map<std::string, std::vector<const Slice*>> off_per_container;
    for (const Slice* s : off) off_per_container[s->name].push_back(s);
    for (auto& [name, slices] : off_per_container) {
      lanes.Add(name, "preemption", std::move(slices));
    }
  }
  // Live queues per GPU, as at the end of each step.
  const std::string live_queues = JsonStream::Quoted("live queues");
  const std::string queues = JsonStream::Quoted("queues");
  for (const auto& s : t.queues_per_gpu) {
    for (size_t k = 0; k < s.size(); ++k) {
      trace.Counter(gpu_pid[s.name], live_queues,
                    std::min(t.step_s * static_cast<double>(k + 1),
                             std::max(r.duration_s, t.step_s)),
                    queues, s.at(k));
    }
  }
  // OS processes: each queue's lifetime, a thread per queue name.
  // Their slices drawn one process at a time (Timeline keeps them compact).
  std::map<std::string, std::vector<const QueueLifetime*>> per_process;
  for (const auto& l : t.queue_lifetimes) {
    per_process[t.lifetime_tracks.at(l.track)].push_back(&l);
  }
  for (const auto& [track, lifetimes] : per_process) {
    const int pid = next++;
    trace.ProcessName(pid, prefix + track, pid - base);
    // Drawn in the order of their names; a name is made once per queue
    // (its type and id), not per lifetime.
    std::map<std::string, std::vector<const QueueLifetime*>> per_queue;
    std::unordered_map<uint64_t, std::vector<const QueueLifetime*>*> of_queue;
    for (const QueueLifetime* l : lifetimes) {
      const uint64_t queue =
          uint64_t{t.lifetime_kinds.at(l->kind).queue_type} << 32 | l->queue_id;
      auto [it, fresh] = of_queue.try_emplace(queue, nullptr);
      if (fresh) it->second = &per_queue[t.LifetimeName(*l)];
      it->second->push_back(l);
    }
    Lanes lanes(trace, pid);
    for (auto& [name, queue] : per_queue) {
      lanes.Add(name, std::move(queue),
                [&, &name = name](int tid, const QueueLifetime& l) {
                  trace.Complete(
                      pid, tid, "queue", name, l.start_s, l.duration_s,
                      [&](const auto& emit) { t.ForEachLifetimeArg(l, emit); });
                });
    }
  }
  // Submission rate per container: counters of one process of their own.
  if (!t.submission_rate_per_container.empty()) {
    trace.ProcessName(base, prefix + "submission rate per container", 0);
    const std::string packets_per_s = JsonStream::Quoted("packets_per_s");
    for (const auto& s : t.submission_rate_per_container) {
      const std::string name =
          JsonStream::Quoted("submissions/s " + ContainerOrHost(s.name));
      for (size_t k = 0; k < s.size(); ++k) {
        trace.Counter(base, name, t.step_s * static_cast<double>(k),
                      packets_per_s, s.at(k));
      }
    }
  }
}

}  // namespace

void WritePerfetto(const std::vector<RunReport>& runs, std::ostream& out) {
  // {"traceEvents":[...],"displayTimeUnit":"ms"}, as one document's
  // compact dump, its events written one by one.
  Trace trace(out);
  trace.out() << R"({"traceEvents":[)";
  for (size_t i = 0; i < runs.size(); ++i) {
    AddRun(trace, runs[i], static_cast<int>(i + 1) * kPerfettoPidsPerRun);
  }
  trace.out() << R"(],"displayTimeUnit":"ms"})"
              << "\n";
}

std::string RenderPerfetto(const std::vector<RunReport>& runs) {
  std::ostringstream out;
  WritePerfetto(runs, out);
  return out.str();
}

}  // namespace gpuq::report
