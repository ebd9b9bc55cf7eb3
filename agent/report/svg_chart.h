// Charts as inline SVG, drawn by gpuq itself so the HTML report needs no
// script, font or stylesheet from anywhere: time-series line charts (linear
// or log y axis), marker (scatter) charts and Gantt bars, each with a title,
// axes, ticks with units and a legend. Every text that reaches the markup
// (titles, legend names, tooltips) goes through Escape(); a chart with
// nothing to draw becomes a short "none in this run" message instead.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpuq::report::svg {

/// Text as HTML/XML character data or attribute value: & < > " ' escaped,
/// invalid UTF-8 and control characters replaced by U+FFFD (kernel `comm`
/// and container names are arbitrary bytes).
std::string Escape(std::string_view text);

/// At most `max_chars` code points of valid UTF-8 `text`, "…" if cut.
std::string Shorten(std::string_view text, size_t max_chars);

/// "310 µs", "2.10 ms", "9.00 s", "2 min 3 s".
std::string FormatSeconds(double seconds);
/// Tick label of a count or rate: "0", "2.5", "4.5k", "1.2M".
std::string FormatNumber(double value);

/// The i-th colour of the palette (colour-blind-safe, cycles).
const char* SeriesColour(size_t i);

struct Point {
  double x = 0, y = 0;
};

struct XySeries {
  std::string name;  ///< legend text (user data: escaped when drawn)
  std::vector<Point> points;
};

enum class Style {
  kStep,     ///< value holds until the next point (counts, rates)
  kMarkers,  ///< one dot per point (events with a duration)
};
enum class YScale { kLinear, kLog };
enum class YUnit { kCount, kSeconds };  ///< how y tick labels are written

/// A horizontal line across the plot, e.g. amdkfd's 9 s preemption timeout.
struct ReferenceLine {
  double y = 0;
  std::string label;
};

struct XyChart {
  std::string id;     ///< element id of the chart (gpuq-made, not user text)
  std::string title;  ///< drawn above the plot
  std::string x_label = "time since capture start (s)";
  std::string y_label;
  std::string empty_message;  ///< shown instead when no series has a point
  double x_max = 0;           ///< x axis is [0, x_max] (the run's duration)
  Style style = Style::kStep;
  YScale y_scale = YScale::kLinear;
  YUnit y_unit = YUnit::kCount;
  /// One small plot per series (shared y axis) instead of one plot with a
  /// legend: for series that often coincide, like queues per GPU.
  bool panels = false;
  std::vector<XySeries> series;
  std::vector<ReferenceLine> references;
};

/// One bar of a Gantt chart.
struct Bar {
  std::string row;  ///< the row it is drawn on ("gpu 11437")
  double start = 0, duration = 0;
  std::string label;    ///< written next to the bar
  std::string tooltip;  ///< shown on hover (SVG <title>)
  bool open = false;    ///< still running at the end: drawn hatched
};

struct GanttChart {
  std::string id, title;
  std::string x_label = "time since capture start (s)";
  std::string empty_message;
  double x_max = 0;
  std::vector<Bar> bars;
};

/// A <figure> with the chart's <svg>, or with `empty_message` when there is
/// nothing to draw. Both carry id=`id` and the title.
std::string RenderXyChart(const XyChart& chart);
std::string RenderGantt(const GanttChart& chart);

}  // namespace gpuq::report::svg
