#include "report/render_perfetto.h"

#include <algorithm>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <unordered_map>

#include "model/container_rows.h"
#include "report/json_stream.h"

namespace gpuq::report {
namespace {

constexpr double kUs = 1e6;  // trace-event times are microseconds

// Writes each trace event as it is made, in the compact form one
// document's dump() would give it: the trace is never held whole. The
// frequent events (slices and counters) are written member by member, no
// json value made per event.
class Trace {
 public:
  explicit Trace(std::ostream& out) : out_(out) {}

  void ProcessName(int pid, const std::string& name, int sort) {
    Metadata(pid, 0, "process_name", "name").String(name) << "}}";
    Metadata(pid, 0, "process_sort_index", "sort_index").Int(sort) << "}}";
  }
  void ThreadName(int pid, int tid, const std::string& name) {
    Metadata(pid, tid, "thread_name", "name").String(name) << "}}";
    Metadata(pid, tid, "thread_sort_index", "sort_index").Int(tid) << "}}";
  }
  void Complete(int pid, int tid, const char* cat, const Slice& s) {
    Complete(pid, tid, cat, s.name, s.start_s, s.duration_s,
             [&s](const auto& emit) {
               for (const auto& [k, v] : s.args) emit(k, v);
             });
  }
  /// An X event; `each_arg(emit)` calls emit(key, value) for each of its
  /// args in key order.
  template <typename EachArg>
  void Complete(int pid, int tid, const char* cat, const std::string& name,
                double start_s, double duration_s, EachArg each_arg) {
    Begin();
    out_ << R"({"name":)";
    out_.String(name) << R"(,"cat":)";
    out_.String(cat);
    Times(pid, tid, start_s, duration_s);
    WriteArgs(out_, each_arg);
    out_ << '}';
  }
  /// An X event whose name, category and args object are written already:
  /// a queue lifetime's are the same few hundred texts, 200,000 times.
  void Complete(int pid, int tid, std::string_view quoted_name,
                std::string_view quoted_cat, double start_s, double duration_s,
                std::string_view args) {
    Begin();
    out_ << R"({"name":)" << quoted_name << R"(,"cat":)" << quoted_cat;
    Times(pid, tid, start_s, duration_s);
    out_ << args << '}';
  }
  /// The args object WriteArgs() writes, as a text.
  template <typename EachArg>
  static std::string Args(EachArg each_arg) {
    std::ostringstream text;
    {
      JsonStream out(text);
      WriteArgs(out, each_arg);
    }
    return text.str();
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
  // An M event up to its one arg's value (`what` and `key` need no
  // escape); the caller writes the value and closes it with "}}".
  JsonStream& Metadata(int pid, int tid, const char* what, const char* key) {
    Begin();
    out_ << R"({"name":")" << what << R"(","ph":"M","ts":0,"pid":)";
    out_.Int(pid) << R"(,"tid":)";
    out_.Int(tid) << R"(,"args":{")" << key << R"(":)";
    return out_;
  }
  // An X event's members from "ph" to "args":
  void Times(int pid, int tid, double start_s, double duration_s) {
    out_ << R"(,"ph":"X","ts":)";
    out_.Number(start_s * kUs) << R"(,"dur":)";
    out_.Number(duration_s * kUs) << R"(,"pid":)";
    out_.Int(pid) << R"(,"tid":)";
    out_.Int(tid) << R"(,"args":)";
  }
  // The args object: `each_arg(emit)` calls emit(key, value) for each in
  // key order.
  template <typename EachArg>
  static void WriteArgs(JsonStream& out, EachArg each_arg) {
    out << '{';
    bool first = true;
    each_arg([&](std::string_view key, std::string_view value) {
      if (!first) out << ',';
      first = false;
      out.String(key) << ':';
      out.String(value);
    });
    out << '}';
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
    const int pid = gpu_pid[s.name];
    for (size_t k = 0; k < s.size(); ++k) {
      trace.Counter(pid, live_queues,
                    std::min(t.step_s * static_cast<double>(k + 1),
                             std::max(r.duration_s, t.step_s)),
                    queues, s.at(k));
    }
  }
  // OS processes: each queue's lifetime, a thread per queue name.
  // Their slices drawn one process at a time (Timeline keeps them compact).
  // A lifetime's args are its kind's and queue id's: written once each.
  const std::string quoted_queue = JsonStream::Quoted("queue");
  std::unordered_map<uint64_t, std::string> args_of;
  const auto ArgsOf = [&](const QueueLifetime& l) -> const std::string& {
    auto [it, fresh] = args_of.try_emplace(uint64_t{l.kind} << 32 | l.queue_id);
    if (fresh) {
      it->second =
          Trace::Args([&](const auto& emit) { t.ForEachLifetimeArg(l, emit); });
    }
    return it->second;
  };
  // Grouped by track index, drawn in the order of the tracks' names.
  std::vector<std::vector<const QueueLifetime*>> per_process(
      t.lifetime_tracks.size());
  for (const auto& l : t.queue_lifetimes) {
    per_process.at(l.track).push_back(&l);
  }
  std::vector<uint32_t> tracks;
  for (uint32_t i = 0; i < per_process.size(); ++i) {
    if (!per_process[i].empty()) tracks.push_back(i);
  }
  std::sort(tracks.begin(), tracks.end(), [&t](uint32_t a, uint32_t b) {
    return t.lifetime_tracks[a] < t.lifetime_tracks[b];
  });
  for (const uint32_t index : tracks) {
    const std::string& track = t.lifetime_tracks[index];
    const std::vector<const QueueLifetime*>& lifetimes = per_process[index];
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
      const std::string quoted_name = JsonStream::Quoted(name);
      lanes.Add(name, std::move(queue), [&](int tid, const QueueLifetime& l) {
        trace.Complete(pid, tid, quoted_name, quoted_queue, l.start_s,
                       l.duration_s, ArgsOf(l));
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
