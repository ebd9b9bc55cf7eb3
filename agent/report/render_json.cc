#include "report/render_json.h"

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "report/headline.h"
#include "report/json_stream.h"
#include "report/report_tables.h"

namespace gpuq::report {

using Json = nlohmann::ordered_json;

namespace {

// Writes a report as dump(2) of one document would, member by member and
// row by row: the document is never held whole. nlohmann's serializer
// writes each value at the depth it has in the document.
class PrettyJson {
 public:
  explicit PrettyJson(std::ostream& out) : out_(out) {}

  /// `value` at indent `indent` (its first line is already placed).
  void Value(const Json& value, unsigned indent) {
    out_.Value(value, true, 2, indent);
  }
  /// `"key": ` of an object's member at `indent`, after a comma unless
  /// it is the first (*first).
  void Key(const std::string& key, unsigned indent, bool* first) {
    if (!*first) out_ << ",\n";
    *first = false;
    out_.Spaces(indent).String(key) << ": ";
  }
  /// An array whose elements `each` writes at `indent` + 2, one call per
  /// element until it returns false: `[]` when there is none.
  template <typename Each>
  void Array(unsigned indent, Each each) {
    bool first = true;
    for (size_t i = 0;; ++i) {
      Json element;
      if (!each(i, &element)) break;
      out_ << (first ? "[\n" : ",\n");
      out_.Spaces(indent + 2);
      first = false;
      Value(element, indent + 2);
    }
    Close(first, '[', indent);
  }
  /// A series as {"name", "values"}, every bucket (the zeros it does not
  /// store included) written one by one: a long capture's row holds
  /// thousands.
  void SeriesValue(const Series& s, unsigned indent) {
    const unsigned in = indent + 2;
    out_ << "{\n";
    out_.Spaces(in) << "\"name\": ";
    out_.String(s.name) << ",\n";
    out_.Spaces(in) << "\"values\": ";
    for (size_t k = 0; k < s.size(); ++k) {
      out_ << (k == 0 ? "[\n" : ",\n");
      out_.Spaces(in + 2).Number(s.at(k));
    }
    Close(s.size() == 0, '[', in);
    out_ << '\n';
    out_.Spaces(indent) << '}';
  }
  /// A slice's members (track, name, start_s, duration_s, args), as
  /// dump(2) writes an object of them: a busy capture has 200,000.
  /// `each_arg(emit)` calls emit(key, value) for each of its args in key order.
  template <typename EachArg>
  void SpanValue(const std::string& track, const std::string& name,
                 double start_s, double duration_s, EachArg each_arg,
                 unsigned indent) {
    const unsigned in = indent + 2;
    out_ << "{\n";
    out_.Spaces(in) << "\"track\": ";
    out_.String(track) << ",\n";
    out_.Spaces(in) << "\"name\": ";
    out_.String(name) << ",\n";
    SpanTimes(start_s, duration_s, in);
    SpanTail(each_arg, indent);
  }
  /// SpanValue's text up to its args, its track and name quoted already.
  void SpanHead(std::string_view quoted_track, std::string_view quoted_name,
                double start_s, double duration_s, unsigned indent) {
    const unsigned in = indent + 2;
    out_ << "{\n";
    out_.Spaces(in) << "\"track\": " << quoted_track << ",\n";
    out_.Spaces(in) << "\"name\": " << quoted_name << ",\n";
    SpanTimes(start_s, duration_s, in);
  }
  /// SpanValue's start_s and duration_s members, at `in`.
  void SpanTimes(double start_s, double duration_s, unsigned in) {
    out_.Spaces(in) << "\"start_s\": ";
    out_.Number(start_s) << ",\n";
    out_.Spaces(in) << "\"duration_s\": ";
    out_.Number(duration_s) << ",\n";
  }
  /// SpanValue's text from its args to its end.
  template <typename EachArg>
  void SpanTail(EachArg each_arg, unsigned indent) {
    const unsigned in = indent + 2;
    out_.Spaces(in) << "\"args\": ";
    bool first = true;
    each_arg([&](std::string_view key, std::string_view value) {
      out_ << (first ? "{\n" : ",\n");
      first = false;
      out_.Spaces(in + 2).String(key) << ": ";
      out_.String(value);
    });
    Close(first, '{', in);
    out_ << '\n';
    out_.Spaces(indent) << '}';
  }
  /// An array of `n` elements, `write(i, indent)` the i-th at `indent`,
  /// as dump(2) writes an array.
  template <typename Write>
  void Spans(size_t n, Write write, unsigned indent) {
    for (size_t i = 0; i < n; ++i) {
      out_ << (i == 0 ? "[\n" : ",\n");
      out_.Spaces(indent + 2);
      write(i, indent + 2);
    }
    Close(n == 0, '[', indent);
  }
  void Series(const std::vector<gpuq::report::Series>& rows, unsigned indent) {
    Spans(
        rows.size(), [&](size_t i, unsigned in) { SeriesValue(rows[i], in); },
        indent);
  }
  JsonStream& out() { return out_; }

 private:
  /// The end of an array or object opened with `open` at `indent`: `[]` or
  /// `{}` when it is empty, else its closing bracket on a line of its own.
  void Close(bool empty, char open, unsigned indent) {
    const char close = open == '[' ? ']' : '}';
    if (empty) {
      out_ << open << close;
      return;
    }
    out_ << '\n';
    out_.Spaces(indent) << close;
  }

  JsonStream out_;
};

// The timeline member, at `in`.
void WriteTimeline(const Timeline& t, unsigned in, bool* first,
                   PrettyJson* json) {
  json->Key("timeline", in, first);
  const unsigned tin = in + 2;
  bool tfirst = true;
  json->out() << "{\n";
  json->Key("step_s", tin, &tfirst);
  json->Value(Json(t.step_s), tin);
  const auto list = [&](const char* key, const std::vector<Series>& rows) {
    json->Key(key, tin, &tfirst);
    json->Series(rows, tin);
  };
  list("queues_per_gpu", t.queues_per_gpu);
  list("submission_rate_per_container", t.submission_rate_per_container);
  list("submission_rate_per_process", t.submission_rate_per_process);
  const auto slices = [&](const char* key, const std::vector<Slice>& rows) {
    json->Key(key, tin, &tfirst);
    json->Spans(
        rows.size(),
        [&](size_t i, unsigned indent) {
          const Slice& s = rows[i];
          json->SpanValue(
              s.track, s.name, s.start_s, s.duration_s,
              [&s](const auto& emit) {
                for (const auto& [k, v] : s.args) emit(k, v);
              },
              indent);
        },
        tin);
  };
  // Written from their words (Timeline keeps them compact): no Slice made.
  // Their tracks, names and args are a few hundred texts, each made once.
  json->Key("queue_lifetimes", tin, &tfirst);
  std::vector<std::string> quoted_tracks;
  for (const std::string& track : t.lifetime_tracks) {
    quoted_tracks.push_back(JsonStream::Quoted(track));
  }
  std::unordered_map<uint64_t, std::pair<std::string, std::string>> texts;
  std::string name;
  json->Spans(
      t.queue_lifetimes.size(),
      [&](size_t i, unsigned indent) {
        const QueueLifetime& l = t.queue_lifetimes[i];
        auto [it, fresh] =
            texts.try_emplace(uint64_t{l.kind} << 32 | l.queue_id);
        auto& [quoted_name, tail] = it->second;
        if (fresh) {
          t.LifetimeName(l, &name);
          quoted_name = JsonStream::Quoted(name);
          std::ostringstream text;
          {
            PrettyJson writer(text);
            writer.SpanTail(
                [&](const auto& emit) { t.ForEachLifetimeArg(l, emit); },
                indent);
          }
          tail = text.str();
        }
        json->SpanHead(quoted_tracks.at(l.track), quoted_name, l.start_s,
                       l.duration_s, indent);
        json->out() << tail;
      },
      tin);
  slices("runlist_ops", t.runlist_ops);
  slices("evictions", t.evictions);
  slices("off_gpu", t.off_gpu);
  slices("oversubscribed", t.oversubscribed);
  json->Key("slices_omitted", tin, &tfirst);
  json->Value(Json(t.slices_omitted), tin);
  json->out() << '\n';
  json->out().Spaces(in) << '}';
}

// One run's object, its members at `indent` + 2.
void WriteRun(const RunReport& r, unsigned indent, PrettyJson* json) {
  const unsigned in = indent + 2;
  bool first = true;
  json->out() << "{\n";
  const auto table = [&](const ReportTable* t) {
    if (t == nullptr) return;
    const std::vector<size_t> shown = ShownColumns(*t, &ReportColumn::json);
    if (shown.empty()) return;  // not a JSON table: its figures are elsewhere
    json->Key(t->key, in, &first);
    json->Array(in, [&](size_t i, Json* out) {
      if (i >= t->rows.size()) return false;
      *out = Json::object();
      for (size_t c : shown) (*out)[t->columns[c].json] = t->rows[i].at(c).json;
      return true;
    });
  };
  const auto own = [&](OwnSection section) {
    if (section == OwnSection::kHeadline) {
      Json headline = Json::object();
      for (const HeadlineFigure& f : Headline(r)) {
        for (const auto& [key, value] : f.json.items()) headline[key] = value;
      }
      for (const auto& [key, value] : headline.items()) {
        json->Key(key, in, &first);
        json->Value(value, in);
      }
    } else if (section == OwnSection::kTimeline) {
      WriteTimeline(r.timeline, in, &first, json);
    }
  };
  WalkLayout(kJsonLayout, r, table, own);
  json->out() << '\n';
  json->out().Spaces(indent) << '}';
}

}  // namespace

void WriteJson(const std::vector<RunReport>& runs, std::ostream& out) {
  PrettyJson json(out);
  bool first = true;
  json.out() << "{\n";
  json.Key("schema", 2, &first);
  json.Value(Json(kReportSchema), 2);
  json.Key("runs", 2, &first);
  json.Spans(
      runs.size(),
      [&](size_t i, unsigned indent) { WriteRun(runs[i], indent, &json); }, 2);
  json.out() << "\n}\n";
}

std::string RenderJson(const std::vector<RunReport>& runs) {
  std::ostringstream out;
  WriteJson(runs, out);
  return out.str();
}

}  // namespace gpuq::report
