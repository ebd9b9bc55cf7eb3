#include "report/render_json.h"

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "export/collector.h"
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
GPUQ_ORDERED_JSON_MEMBERS(Series, name, values)
GPUQ_ORDERED_JSON_MEMBERS(Slice, track, name, start_s, duration_s, args)
#undef GPUQ_ORDERED_JSON_MEMBERS

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
  /// `s` as Value(Json(s), indent) writes it (GPUQ_ORDERED_JSON_MEMBERS'
  /// order), member by member: a busy capture has 200,000 of them.
  void SliceValue(const Slice& s, unsigned indent) {
    const std::string pad(indent + 2, ' ');
    const auto member = [&](const char* key, const Json& value, bool last) {
      out_ << pad << '"' << key << "\": ";
      Value(value, indent + 2);
      if (!last) out_ << ",\n";
    };
    out_ << "{\n";
    member("track", s.track, false);
    member("name", s.name, false);
    member("start_s", s.start_s, false);
    member("duration_s", s.duration_s, false);
    out_ << pad << "\"args\": ";
    if (s.args.empty()) {
      out_ << "{}";
    } else {
      out_ << "{\n";
      bool first = true;
      for (const auto& [k, v] : s.args) {
        if (!first) out_ << ",\n";
        first = false;
        out_ << pad << "  ";
        Value(Json(k), indent + 4);
        out_ << ": ";
        Value(Json(v), indent + 4);
      }
      out_ << "\n" << pad << "}";
    }
    out_ << "\n" << std::string(indent, ' ') << "}";
  }
  /// The timeline's queue lifetimes as SliceValue(t.LifetimeSlice(l)) writes
  /// each, from their words: no slice is made (the interned names are
  /// quoted once).
  void Lifetimes(const Timeline& t, unsigned indent) {
    if (t.queue_lifetimes.empty()) {
      out_ << "[]";
      return;
    }
    const auto quoted = [](const std::string& text) {
      return Json(text).dump(-1, ' ', false, Json::error_handler_t::replace);
    };
    std::vector<std::string> tracks;
    std::vector<std::string> ends;
    for (const std::string& track : t.lifetime_tracks) {
      tracks.push_back(quoted(track));
    }
    for (const std::string& end : t.lifetime_ends) ends.push_back(quoted(end));
    std::map<uint32_t, std::string> types;  // queue_type -> quoted label
    const std::string in(indent + 2, ' ');
    const std::string pad(indent + 4, ' ');
    const std::string args(indent + 6, ' ');
    out_ << "[\n";
    bool first = true;
    for (const QueueLifetime& l : t.queue_lifetimes) {
      if (!first) out_ << ",\n";
      first = false;
      auto type = types.find(l.queue_type);
      if (type == types.end()) {
        type = types.emplace(l.queue_type, quoted(QueueTypeLabel(l.queue_type)))
                   .first;
      }
      out_ << in << "{\n"
           << pad << "\"track\": " << tracks.at(l.track) << ",\n"
           << pad << "\"name\": " << quoted(LifetimeName(l)) << ",\n"
           << pad << "\"start_s\": ";
      Value(Json(l.start_s), indent + 4);
      out_ << ",\n" << pad << "\"duration_s\": ";
      Value(Json(l.duration_s), indent + 4);
      out_ << ",\n"
           << pad << "\"args\": {\n"
           << args << "\"end\": " << ends.at(l.end) << ",\n"
           << args << "\"gpu_id\": \"" << l.gpu_id << "\",\n"
           << args << "\"queue_id\": \"" << l.queue_id << "\",\n"
           << args << "\"queue_type\": " << type->second;
      if (l.seeded) out_ << ",\n" << args << "\"seeded\": \"true\"";
      out_ << "\n" << pad << "}\n" << in << "}";
    }
    out_ << "\n" << std::string(indent, ' ') << "]";
  }
  /// An array of `n` slices, `at(i)` the i-th, as Listed() would write it.
  template <typename At>
  void Slices(size_t n, At at, unsigned indent) {
    if (n == 0) {
      out_ << "[]";
      return;
    }
    out_ << "[\n";
    for (size_t i = 0; i < n; ++i) {
      if (i > 0) out_ << ",\n";
      out_ << std::string(indent + 2, ' ');
      SliceValue(at(i), indent + 2);
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
    json->Slices(
        rows.size(), [&rows](size_t i) -> const Slice& { return rows[i]; },
        tin);
  };
  // Written from their words (Timeline keeps them compact).
  json->Key("queue_lifetimes", tin, &tfirst);
  json->Lifetimes(t, tin);
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
