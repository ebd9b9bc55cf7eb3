// Where each output places the report's sections: one typed table, read by
// the text (and markdown), HTML and JSON renderers. A step is one of the
// table sections (report_tables.h), one of the renderer's own sections
// (the summary, a chart), or the tables the output did not place, in
// ReportTables() order. A table an output's layout does not name still
// appears, at its kRest step.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace gpuq::report {

/// Every table section, in the order ReportTables() builds them.
enum class TableId : uint8_t {
  kGpuQueues,
  kContainers,
  kProcesses,
  kGpuSubmissions,
  kQueueSubmissions,
  kRunlist,
  kOversubscription,
  kPreemptions,
  kPreemptedBy,
  kVerdicts,
  kUnsampled,
  kPriorities,
  kEvictions,
  kCreateFailures,
  kDoorbells,
  kClassification,
  kContainerGpusAtEnd,
  kPhysicalGpus,
};
inline constexpr size_t kTableIds = 18;

/// A renderer's own sections, between tables.
enum class OwnSection : uint8_t {
  kHeadline,          ///< text: the summary table; JSON: the headline members
  kSubmissionsLine,   ///< text: "Submissions" and its totals line
  kQueuesChart,       ///< HTML: "Hardware queues" and its chart
  kSubmissionsChart,  ///< HTML: "Submissions" and its chart
  kRunlistCharts,     ///< HTML: "Runlist preemption", unmaps and off-GPU
  kEvictionsChart,    ///< HTML: "Evictions" and its chart
  kTimeline,          ///< JSON: the timeline object
};

struct LayoutStep {
  enum class Kind : uint8_t { kTable, kOwn, kRest };
  Kind kind;
  TableId table = TableId::kGpuQueues;
  OwnSection own = OwnSection::kHeadline;
};
constexpr LayoutStep Table(TableId t) {
  return {LayoutStep::Kind::kTable, t, OwnSection::kHeadline};
}
constexpr LayoutStep Own(OwnSection s) {
  return {LayoutStep::Kind::kOwn, TableId::kGpuQueues, s};
}
inline constexpr LayoutStep kRest{LayoutStep::Kind::kRest};

/// Text and markdown.
inline constexpr std::array kTextLayout = {
    Own(OwnSection::kHeadline),        Table(TableId::kContainers),
    Table(TableId::kProcesses),        Table(TableId::kGpuQueues),
    Table(TableId::kPhysicalGpus),     Own(OwnSection::kSubmissionsLine),
    Table(TableId::kGpuSubmissions),   Table(TableId::kQueueSubmissions),
    Table(TableId::kUnsampled),        Table(TableId::kRunlist),
    Table(TableId::kOversubscription), Table(TableId::kPreemptions),
    Table(TableId::kPreemptedBy),      Table(TableId::kPriorities),
    Table(TableId::kEvictions),        Table(TableId::kCreateFailures),
    Table(TableId::kClassification),   kRest,
};

/// HTML (after the run's headline cards).
inline constexpr std::array kHtmlLayout = {
    Own(OwnSection::kQueuesChart),
    Table(TableId::kGpuQueues),
    Table(TableId::kPhysicalGpus),
    Table(TableId::kVerdicts),
    Table(TableId::kContainers),
    Table(TableId::kProcesses),
    Own(OwnSection::kSubmissionsChart),
    Table(TableId::kGpuSubmissions),
    Table(TableId::kQueueSubmissions),
    Table(TableId::kUnsampled),
    Own(OwnSection::kRunlistCharts),
    Table(TableId::kRunlist),
    Table(TableId::kOversubscription),
    Own(OwnSection::kEvictionsChart),
    Table(TableId::kEvictions),
    Table(TableId::kCreateFailures),
    kRest,
};

/// JSON: a run's members.
inline constexpr std::array kJsonLayout = {
    Own(OwnSection::kHeadline),
    Table(TableId::kContainers),
    Table(TableId::kProcesses),
    Table(TableId::kGpuQueues),
    Table(TableId::kPhysicalGpus),
    Table(TableId::kGpuSubmissions),
    Table(TableId::kQueueSubmissions),
    Table(TableId::kRunlist),
    Table(TableId::kEvictions),
    Table(TableId::kCreateFailures),
    kRest,
    Own(OwnSection::kTimeline),
};

}  // namespace gpuq::report
