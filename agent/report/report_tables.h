// The report's sections that are one table, each written once as a column
// list and shown by every renderer: text and markdown (a titled table), HTML
// (a titled table; numeric columns right-aligned) and JSON (an array of
// objects under the table's key, one member per column); an output none of
// whose columns it names shows none of it. A renderer places
// the tables it knows where it wants them and appends the others after its
// own sections, so a new table section is its rows in RunReport, their
// analysis, and its columns here.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/report_layout.h"
#include "report/run_report.h"

namespace gpuq::report {

/// One cell: its text (text, markdown and HTML) and its JSON value.
struct ReportCell {
  std::string text;
  nlohmann::ordered_json json;
};

struct ReportColumn {
  const char* text;      ///< text and markdown header: "GPU_ID"; null: none
  const char* html;      ///< HTML header: "GPU"; null: none
  const char* json;      ///< JSON member: "gpu_id"; null: none
  bool numeric = false;  ///< right-aligned in HTML
};

struct ReportTable {
  const char* key;      ///< JSON member of the run: "create_failure_list"
  const char* html_id;  ///< HTML id after the run's prefix: "create-failures"
  const char* text_title;  ///< "Create failures"
  const char* html_title;  ///< "Queue creation failures"
  /// HTML's line for a table without rows (text and markdown say "(none)");
  /// "": none, nor the title (a chart above says it).
  const char* html_empty;
  std::vector<ReportColumn> columns;
  std::vector<std::vector<ReportCell>> rows;
  /// No rows: no section in text and markdown either (where none means the
  /// run could not tell, not that nothing happened).
  bool only_with_rows = false;
  /// The text and markdown line for a table without rows; null: "(none)".
  const char* text_empty = nullptr;
  TableId id = TableId::kGpuQueues;  ///< which section (ReportTables() sets it)
};

/// The indexes of the columns of `t` an output shows: those whose name in
/// that output (`name`: &ReportColumn::text, ::html or ::json) is not null.
std::vector<size_t> ShownColumns(const ReportTable& t,
                                 const char* ReportColumn::*name);

/// Every table section of `r`, in the order renderers append them.
std::vector<ReportTable> ReportTables(const RunReport& r);

/// The name of a capture in a report: its file name without directories
/// and without the ".gpuqcap" suffix.
std::string ShortName(const std::string& name);

/// What a report with several runs calls each (its columns, headings): the
/// label given with the capture (RunReport::label), else the shortest
/// suffix of its path, in whole directories and without ".gpuqcap", that
/// no other run is called ("a/run" and "b/run" for a/run.gpuqcap and
/// b/run.gpuqcap). Runs still called alike (the same path twice, or a
/// suffix that is another's label) get " (2)", " (3)" in order.
std::vector<std::string> RunLabels(const std::vector<RunReport>& runs);

/// "140 us", "2.1 ms", "9.000412345 s": the unit that keeps digits short.
std::string FormatDuration(double seconds);
/// "12.784": seconds with three decimals, as the text report's columns of
/// seconds print them.
std::string FixedSeconds(double seconds);

/// Per GPU counts as "11437: 3, 23710: 1" ("-" for none), and as the JSON
/// object {"11437": 3, "23710": 1} (JSON keys are strings).
std::string PerGpuText(const std::map<uint32_t, uint64_t>& m);
nlohmann::ordered_json PerGpuObject(const std::map<uint32_t, uint64_t>& m);

/// The JSON of a row's owner: {"container", "pod", "namespace"}.
nlohmann::ordered_json OwnerJson(const Owner& o);
/// Duration statistics as JSON: count, then sum_s, min_s, p50_s ... max_s
/// (found by ADL wherever a row holding them is written).
void to_json(nlohmann::ordered_json& j, const DurationStats& d);
void to_json(nlohmann::ordered_json& j, const OversubscriptionFigures& o);

/// A renderer's placement of the tables: Take(id) gives the one it places
/// there (null if already placed), Rest() those it did not place, in order.
class ReportTablePlacement {
 public:
  explicit ReportTablePlacement(const RunReport& r)
      : tables_(ReportTables(r)) {}
  const ReportTable* Take(TableId id);
  std::vector<const ReportTable*> Rest();

 private:
  std::vector<ReportTable> tables_;
  std::vector<bool> taken_ = std::vector<bool>(tables_.size(), false);
};

/// Walks an output's layout (report_layout.h) over `r`'s tables: `table`
/// for each table placed (null when absent), and for each left to the
/// kRest step; `own` for each of the renderer's own sections.
template <size_t N, typename OnTable, typename OnOwn>
void WalkLayout(const std::array<LayoutStep, N>& layout, const RunReport& r,
                OnTable table, OnOwn own) {
  ReportTablePlacement tables(r);
  for (const LayoutStep& step : layout) {
    switch (step.kind) {
      case LayoutStep::Kind::kTable:
        table(tables.Take(step.table));
        break;
      case LayoutStep::Kind::kOwn:
        own(step.own);
        break;
      case LayoutStep::Kind::kRest:
        for (const ReportTable* t : tables.Rest()) table(t);
        break;
    }
  }
}

}  // namespace gpuq::report
