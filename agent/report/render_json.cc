#include "report/render_json.h"

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

namespace {

// An array of rows (an empty one is [], not null).
template <typename Row>
Json Listed(const std::vector<Row>& rows) {
  Json out = Json::array();
  for (const Row& row : rows) out.push_back(row);
  return out;
}

}  // namespace

nlohmann::ordered_json RunJson(const RunReport& r) {
  Json run = Json::object();
  for (const HeadlineFigure& f : Headline(r)) {
    for (const auto& [key, value] : f.json.items()) run[key] = value;
  }

  ReportTablePlacement tables(r);
  const auto add = [&run](const ReportTable* t) {
    if (t == nullptr) return;
    const std::vector<size_t> shown = ShownColumns(*t, &ReportColumn::json);
    if (shown.empty()) return;  // not a JSON table: its figures are elsewhere
    Json rows = Json::array();
    for (const auto& row : t->rows) {
      Json object = Json::object();
      for (size_t i : shown) object[t->columns[i].json] = row.at(i).json;
      rows.push_back(std::move(object));
    }
    run[t->key] = std::move(rows);
  };
  add(tables.Take("containers"));
  add(tables.Take("processes"));

  add(tables.Take("gpu_queues"));
  add(tables.Take("gpu_submissions"));
  add(tables.Take("queue_submissions"));

  add(tables.Take("runlist"));

  add(tables.Take("eviction_list"));
  add(tables.Take("create_failure_list"));
  for (const ReportTable* t : tables.Rest()) add(t);

  const Timeline& t = r.timeline;
  run["timeline"] = Json{
      {"step_s", t.step_s},
      {"queues_per_gpu", Listed(t.queues_per_gpu)},
      {"submission_rate_per_container",
       Listed(t.submission_rate_per_container)},
      {"submission_rate_per_process", Listed(t.submission_rate_per_process)},
      {"queue_lifetimes", Listed(t.queue_lifetimes)},
      {"runlist_ops", Listed(t.runlist_ops)},
      {"evictions", Listed(t.evictions)},
      {"off_gpu", Listed(t.off_gpu)},
      {"oversubscribed", Listed(t.oversubscribed)},
      {"slices_omitted", t.slices_omitted}};
  return run;
}

std::string RenderJson(const std::vector<RunReport>& runs) {
  Json out;
  out["schema"] = kReportSchema;
  out["runs"] = Json::array();
  for (const RunReport& r : runs) out["runs"].push_back(RunJson(r));
  // Names come from the kernel (comm), cgroup paths and captures: invalid
  // UTF-8 is replaced (U+FFFD), never thrown as type_error 316.
  return out.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace gpuq::report
