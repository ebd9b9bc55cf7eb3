#include "report/render_json.h"

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "report/headline.h"
#include "report/report_tables.h"

namespace gpuq::report {

using Json = nlohmann::ordered_json;

// Rows written member by member under their own names, in this order, by
// the expansion of nlohmann's NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE: bookworm's
// 3.11.2 defines that macro for nlohmann::json only (keys sorted), and the
// report keeps its keys in order (ordered_json). Found by ADL, so in the
// rows' namespace: the timeline's. The headline (report/headline.h) and
// the report's tables (report_tables.h) are written from their lists.
#define GPUQ_ORDERED_JSON_MEMBERS(Type, ...)                                 \
  void to_json(Json& nlohmann_json_j, const Type& nlohmann_json_t) {         \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__)) \
  }
GPUQ_ORDERED_JSON_MEMBERS(Slice, track, name, start_s, duration_s, args)
#undef GPUQ_ORDERED_JSON_MEMBERS

// A series' every bucket, the zeros it does not store included.
void to_json(Json& j, const Series& s) {
  j["name"] = s.name;
  j["values"] = s.Dense();
}

namespace {

// An array of rows (an empty one is [], not null).
template <typename Row>
Json Listed(const std::vector<Row>& rows) {
  Json out = Json::array();
  for (const Row& row : rows) out.push_back(row);
  return out;
}

}  // namespace

namespace {

// Writes a report as dump(2) of one document would, member by member and
// row by row: the document is never held whole. nlohmann's serializer
// writes each value at the depth it has in the document.
class PrettyJson {
 public:
  explicit PrettyJson(std::ostream& out)
      : out_(out),
        serializer_(nlohmann::detail::output_adapter<char>(out), ' ',
                    // Names come from the kernel (comm), cgroup paths and
                    // captures: invalid UTF-8 is replaced (U+FFFD).
                    Json::error_handler_t::replace) {}

  /// `value` at indent `indent` (its first line is already placed).
  void Value(const Json& value, unsigned indent) {
    serializer_.dump(value, true, false, 2, indent);
  }
  /// `"key": ` of an object's member at `indent`, after a comma unless
  /// it is the first (*first).
  void Key(const std::string& key, unsigned indent, bool* first) {
    if (!*first) out_ << ",\n";
    *first = false;
    out_ << std::string(indent, ' ');
    Value(Json(key), indent);
    out_ << ": ";
  }
  /// An array whose elements `each` writes at `indent` + 2, one call per
  /// element until it returns false: `[]` when there is none.
  template <typename Each>
  void Array(unsigned indent, Each each) {
    bool first = true;
    for (size_t i = 0;; ++i) {
      Json element;
      if (!each(i, &element)) break;
      out_ << (first ? "[\n" : ",\n") << std::string(indent + 2, ' ');
      first = false;
      Value(element, indent + 2);
    }
    out_ << (first ? "[]" : "\n" + std::string(indent, ' ') + "]");
  }
  /// A slice as Value(Json(slice), indent) writes it
  /// (GPUQ_ORDERED_JSON_MEMBERS' order), member by member: a busy capture
  /// has 200,000 of them. `each_arg(emit)` calls emit(key, value) for each
  /// of its args in key order.
  template <typename EachArg>
  void SpanValue(const std::string& track, const std::string& name,
                 double start_s, double duration_s, EachArg each_arg,
                 unsigned indent) {
    const std::string pad(indent + 2, ' ');
    const auto member = [&](const char* key, const Json& value) {
      out_ << pad << '"' << key << "\": ";
      Value(value, indent + 2);
      out_ << ",\n";
    };
    out_ << "{\n";
    member("track", track);
    member("name", name);
    member("start_s", start_s);
    member("duration_s", duration_s);
    out_ << pad << "\"args\": ";
    bool first = true;
    each_arg([&](const std::string& key, const std::string& value) {
      out_ << (first ? "{\n" : ",\n") << pad << "  ";
      first = false;
      Value(Json(key), indent + 4);
      out_ << ": ";
      Value(Json(value), indent + 4);
    });
    out_ << (first ? std::string("{}") : "\n" + pad + "}");
    out_ << "\n" << std::string(indent, ' ') << "}";
  }
  /// An array of `n` spans, `write(i, indent)` the i-th at `indent`, as
  /// Listed() would write it.
  template <typename Write>
  void Spans(size_t n, Write write, unsigned indent) {
    if (n == 0) {
      out_ << "[]";
      return;
    }
    out_ << "[\n";
    for (size_t i = 0; i < n; ++i) {
      if (i > 0) out_ << ",\n";
      out_ << std::string(indent + 2, ' ');
      write(i, indent + 2);
    }
    out_ << "\n" << std::string(indent, ' ') << "]";
  }
  template <typename Row>
  void Listed(const std::vector<Row>& rows, unsigned indent) {
    Array(indent, [&rows](size_t i, Json* out) {
      if (i >= rows.size()) return false;
      *out = rows[i];
      return true;
    });
  }
  std::ostream& out() { return out_; }

 private:
  std::ostream& out_;
  nlohmann::detail::serializer<Json> serializer_;
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
  const auto list = [&](const char* key, const auto& rows) {
    json->Key(key, tin, &tfirst);
    json->Listed(rows, tin);
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
  json->Key("queue_lifetimes", tin, &tfirst);
  json->Spans(
      t.queue_lifetimes.size(),
      [&](size_t i, unsigned indent) {
        const QueueLifetime& l = t.queue_lifetimes[i];
        json->SpanValue(
            t.lifetime_tracks.at(l.track), t.LifetimeName(l), l.start_s,
            l.duration_s,
            [&](const auto& emit) { t.ForEachLifetimeArg(l, emit); }, indent);
      },
      tin);
  slices("runlist_ops", t.runlist_ops);
  slices("evictions", t.evictions);
  slices("off_gpu", t.off_gpu);
  slices("oversubscribed", t.oversubscribed);
  json->Key("slices_omitted", tin, &tfirst);
  json->Value(Json(t.slices_omitted), tin);
  json->out() << "\n" << std::string(in, ' ') << "}";
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
  json->out() << "\n" << std::string(indent, ' ') << "}";
}

}  // namespace

void WriteJson(const std::vector<RunReport>& runs, std::ostream& out) {
  PrettyJson json(out);
  bool first = true;
  out << "{\n";
  json.Key("schema", 2, &first);
  json.Value(Json(kReportSchema), 2);
  json.Key("runs", 2, &first);
  if (runs.empty()) {
    out << "[]";
  } else {
    out << "[\n";
    for (size_t i = 0; i < runs.size(); ++i) {
      if (i > 0) out << ",\n";
      out << "    ";
      WriteRun(runs[i], 4, &json);
    }
    out << "\n  ]";
  }
  out << "\n}\n";
}

std::string RenderJson(const std::vector<RunReport>& runs) {
  std::ostringstream out;
  WriteJson(runs, out);
  return out.str();
}

}  // namespace gpuq::report
