// The report's sections that are one table, each written once as a column
// list and shown by every renderer: text and markdown (a titled table), HTML
// (a titled table; numeric columns right-aligned) and JSON (an array of
// objects under the table's key, one member per column). A renderer places
// the tables it knows where it wants them and appends the others after its
// own sections, so a new table section is its rows in RunReport, their
// analysis, and its columns here.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/run_report.h"

namespace gpuq::report {

/// One cell: its text (text, markdown and HTML) and its JSON value.
struct ReportCell {
  std::string text;
  nlohmann::ordered_json json;
};

struct ReportColumn {
  const char* text;      ///< text and markdown header: "GPU_ID"
  const char* html;      ///< HTML header: "GPU"
  const char* json;      ///< JSON member: "gpu_id"
  bool numeric = false;  ///< right-aligned in HTML
};

struct ReportTable {
  const char* key;      ///< JSON member of the run: "create_failure_list"
  const char* html_id;  ///< HTML id after the run's prefix: "create-failures"
  const char* text_title;  ///< "Create failures"
  const char* html_title;  ///< "Queue creation failures"
  /// HTML's line for a table without rows (text and markdown say "(none)").
  const char* html_empty;
  std::vector<ReportColumn> columns;
  std::vector<std::vector<ReportCell>> rows;
};

/// Every table section of `r`, in the order renderers append them.
std::vector<ReportTable> ReportTables(const RunReport& r);

/// The JSON of a row's owner: {"container", "pod", "namespace"}.
nlohmann::ordered_json OwnerJson(const Owner& o);

/// A renderer's placement of the tables: Take(key) gives the one it places
/// there (null if `key` is none), Rest() those it did not place, in order.
class ReportTablePlacement {
 public:
  explicit ReportTablePlacement(const RunReport& r)
      : tables_(ReportTables(r)) {}
  const ReportTable* Take(const std::string& key);
  std::vector<const ReportTable*> Rest();

 private:
  std::vector<ReportTable> tables_;
  std::vector<bool> taken_ = std::vector<bool>(tables_.size(), false);
};

}  // namespace gpuq::report
