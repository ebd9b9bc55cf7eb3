#include "report/svg_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace gpuq::report::svg {
namespace {

// Geometry of every chart (SVG user units; the <svg> scales to the page).
constexpr double kWidth = 1100;
constexpr double kLeft = 84;  // room for y tick labels and the y label
constexpr double kRight = 24;
constexpr double kTop = 44;  // room for the title
constexpr double kPlotHeight = 240;
constexpr double kAxisBelow = 48;  // x tick labels and the x label
constexpr double kLegendRow = 18;
constexpr double kCharWidth = 7.4;  // generous advance of the 12px sans font
constexpr size_t kLegendChars = 40;

// Length in bytes of the valid UTF-8 sequence at s[i], 0 if invalid.
size_t Utf8Length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t n = 0;
  uint32_t cp = 0;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3F);
  }
  // Overlong forms, surrogates and beyond U+10FFFF are invalid too.
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) ||
      (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  return n;
}

// Code points of `s` (the width estimate of a label).
double CodePoints(std::string_view s) {
  double n = 0;
  for (size_t i = 0; i < s.size();) {
    i += std::max<size_t>(1, Utf8Length(s, i));
    ++n;
  }
  return n;
}

std::string Num(double v) { return fmt::format("{:.1f}", v); }

// A "nice" tick step (1, 2 or 5 x 10^k) for about `target` ticks over span.
double NiceStep(double span, int target) {
  if (span <= 0) return 1;
  const double raw = span / target;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  const double f = raw / mag;
  const double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
  return nice * mag;
}

// Tick label of a time on the x axis, or of a log-scale duration.
std::string TickSeconds(double s) {
  if (s == 0) return "0";
  if (s < 1e-3) return fmt::format("{:g} µs", s * 1e6);
  if (s < 1) return fmt::format("{:g} ms", s * 1e3);
  return fmt::format("{:g} s", s);
}

struct YAxis {
  YScale scale = YScale::kLinear;
  double lo = 0, hi = 1;        // linear: values; log: log10 of values
  std::vector<double> ticks;    // in values
  double Pos(double v) const {  // 0 at lo, 1 at hi
    if (scale == YScale::kLog) {
      v = std::log10(std::max(v, std::pow(10, lo)));
    }
    return (v - lo) / (hi - lo);
  }
};

YAxis MakeYAxis(const XyChart& c) {
  YAxis a;
  a.scale = c.y_scale;
  double vmin = INFINITY, vmax = 0;
  bool integral = true;
  for (const auto& s : c.series) {
    for (const auto& p : s.points) {
      if (!std::isfinite(p.y)) continue;
      if (p.y > 0) vmin = std::min(vmin, p.y);
      vmax = std::max(vmax, p.y);
      integral = integral && p.y == std::floor(p.y);
    }
  }
  for (const auto& r : c.references) {
    if (r.y > 0) vmin = std::min(vmin, r.y);
    vmax = std::max(vmax, r.y);
  }
  if (c.y_scale == YScale::kLog) {
    if (!std::isfinite(vmin)) vmin = vmax > 0 ? vmax : 1e-6;
    if (vmax <= 0) vmax = vmin;
    a.lo = std::floor(std::log10(vmin));
    a.hi = std::ceil(std::log10(vmax));
    if (a.hi <= a.lo) a.hi = a.lo + 1;
    const int every = a.hi - a.lo > 8 ? 2 : 1;
    for (double e = a.lo; e <= a.hi + 1e-9; e += every) {
      a.ticks.push_back(std::pow(10, e));
    }
    return a;
  }
  if (vmax <= 0) vmax = 1;
  double step = NiceStep(vmax, 5);
  if (integral) step = std::max(step, 1.0);
  a.lo = 0;
  a.hi = std::ceil(vmax / step - 1e-9) * step;
  for (double t = 0; t <= a.hi + step / 2; t += step) a.ticks.push_back(t);
  return a;
}

std::string YTickLabel(const XyChart& c, double v) {
  return c.y_unit == YUnit::kSeconds ? TickSeconds(v) : FormatNumber(v);
}

std::string Empty(const std::string& id, const std::string& title,
                  const std::string& message) {
  return fmt::format(
      "<figure class=\"chart chart-empty\" id=\"{}\">"
      "<figcaption>{}</figcaption><p class=\"empty\">{}</p></figure>\n",
      Escape(id), Escape(title), Escape(message));
}

// The x axis (time) below a plot of `width` at (x0, y0 = plot bottom).
void DrawXAxis(std::string& out, double x0, double y0, double width,
               double x_max, const std::string& label, int ticks = 10) {
  const double step = NiceStep(x_max, ticks);
  for (double t = 0; t <= x_max * (1 + 1e-9); t += step) {
    const double x = x0 + width * t / x_max;
    out += fmt::format(
        "<line class=\"tick\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>"
        "<text x=\"{0}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        Num(x), Num(y0), Num(y0 + 5), Num(y0 + 18),
        Escape(fmt::format("{:g}", t)));
  }
  out += fmt::format(
      "<line class=\"axis\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>\n",
      Num(x0), Num(y0), Num(x0 + width), Num(y0));
  if (label.empty()) return;
  out += fmt::format(
      "<text class=\"axis-label\" x=\"{}\" y=\"{}\" "
      "text-anchor=\"middle\">{}</text>\n",
      Num(x0 + width / 2), Num(y0 + 38), Escape(label));
}

std::string SvgOpen(const std::string& id, const std::string& title,
                    double height) {
  return fmt::format(
      "<figure class=\"chart\" id=\"{0}\">"
      "<svg class=\"chart-svg\" viewBox=\"0 0 {1} {2}\" role=\"img\" "
      "aria-labelledby=\"{0}-title\">\n<title id=\"{0}-title\">{3}</title>\n"
      "<rect class=\"bg\" x=\"0\" y=\"0\" width=\"{1}\" height=\"{2}\"/>\n"
      "<text class=\"chart-title\" x=\"{4}\" y=\"24\">{3}</text>\n",
      Escape(id), Num(kWidth), Num(height), Escape(title), Num(kLeft));
}

}  // namespace

std::string Escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    const size_t n = Utf8Length(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
      continue;
    }
    if (n == 1) {
      const auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && c != '\t' && c != '\n') || u == 0x7F) {
        out += "\xEF\xBF\xBD";
      } else if (c == '&') {
        out += "&amp;";
      } else if (c == '<') {
        out += "&lt;";
      } else if (c == '>') {
        out += "&gt;";
      } else if (c == '"') {
        out += "&quot;";
      } else if (c == '\'') {
        out += "&#39;";
      } else {
        out += c;
      }
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::string Shorten(std::string_view text, size_t max_chars) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size();) {
    const size_t n = std::max<size_t>(1, Utf8Length(text, i));
    if (++chars > max_chars) {
      return std::string(text.substr(0, i)) + "\xE2\x80\xA6";  // …
    }
    i += n;
  }
  return std::string(text);
}

std::string FormatSeconds(double s) {
  if (!std::isfinite(s)) return "-";
  auto scaled = [](double v, const char* unit) {
    const double a = std::fabs(v);
    if (a >= 100) return fmt::format("{:.0f} {}", v, unit);
    if (a >= 10) return fmt::format("{:.1f} {}", v, unit);
    return fmt::format("{:.2f} {}", v, unit);
  };
  const double a = std::fabs(s);
  if (a == 0) return "0 s";
  if (a < 1e-3) return scaled(s * 1e6, "µs");
  if (a < 1) return scaled(s * 1e3, "ms");
  return scaled(s, "s");
}

std::string FormatNumber(double v) {
  const double a = std::fabs(v);
  if (a >= 1e9) return fmt::format("{:g}G", v / 1e9);
  if (a >= 1e6) return fmt::format("{:g}M", v / 1e6);
  if (a >= 1e3) return fmt::format("{:g}k", v / 1e3);
  return fmt::format("{:g}", v);
}

const char* SeriesColour(size_t i) {
  // Okabe-Ito, then Tableau's darker tones: distinct on white, colour-blind
  // safe for the first eight.
  static const char* const kPalette[] = {
      "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9",
      "#8C564B", "#F0C400", "#7F7F7F", "#17BECF", "#9467BD", "#2CA02C"};
  return kPalette[i % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

namespace {

// One plot area at (x0, top), w x h: y grid and ticks, axes, the series
// `which` of `c` (colour i for series i) and the reference lines.
void DrawPlot(std::string& out, const XyChart& c, const YAxis& y,
              const std::vector<size_t>& which, double x0, double top, double w,
              double h, bool panel) {
  const double x_max = c.x_max > 0 ? c.x_max : 1;
  const double bottom = top + h;
  auto px = [&](double x) { return x0 + w * std::clamp(x / x_max, 0.0, 1.0); };
  auto py = [&](double v) {
    return bottom - h * std::clamp(y.Pos(v), 0.0, 1.0);
  };
  for (double t : y.ticks) {
    const double yy = py(t);
    out += fmt::format(
        "<line class=\"grid\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>"
        "<text x=\"{3}\" y=\"{4}\" text-anchor=\"end\">{5}</text>\n",
        Num(x0), Num(yy), Num(x0 + w), Num(x0 - 6), Num(yy + 4),
        Escape(YTickLabel(c, t)));
  }
  out += fmt::format(
      "<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n",
      Num(x0), Num(top), Num(bottom));
  if (!panel) {
    out += fmt::format(
        "<text class=\"axis-label\" transform=\"translate(16 {}) "
        "rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
        Num(top + h / 2), Escape(c.y_label));
  }
  DrawXAxis(out, x0, bottom, w, x_max, panel ? "" : c.x_label, panel ? 4 : 10);

  for (size_t i : which) {
    const auto& s = c.series[i];
    const char* colour = SeriesColour(i);
    std::vector<Point> pts = s.points;
    std::stable_sort(pts.begin(), pts.end(),
                     [](const Point& a, const Point& b) { return a.x < b.x; });
    if (c.style == Style::kStep) {
      std::string d;
      for (const auto& p : pts) {
        if (!std::isfinite(p.y)) continue;
        d += d.empty() ? fmt::format("M{} {}", Num(px(p.x)), Num(py(p.y)))
                       : fmt::format("H{}V{}", Num(px(p.x)), Num(py(p.y)));
      }
      if (pts.size() == 1) d += "h2";  // visible when alone
      out += fmt::format(
          "<path class=\"series\" d=\"{}\" stroke=\"{}\"><title>{}</title>"
          "</path>\n",
          d, colour, Escape(s.name));
    } else {
      out += fmt::format("<g class=\"series\" fill=\"{}\">", colour);
      for (const auto& p : pts) {
        if (!std::isfinite(p.y)) continue;
        out += fmt::format(
            "<circle cx=\"{}\" cy=\"{}\" r=\"4\"><title>{}</title></circle>",
            Num(px(p.x)), Num(py(p.y)),
            Escape(fmt::format("{}: at {:.3f} s, {}", s.name, p.x,
                               c.y_unit == YUnit::kSeconds
                                   ? FormatSeconds(p.y)
                                   : FormatNumber(p.y))));
      }
      out += "</g>\n";
    }
  }
  for (const auto& r : c.references) {
    const double yy = py(r.y);
    out += fmt::format(
        "<line class=\"reference\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" "
        "y2=\"{1}\"/><text class=\"reference-label\" x=\"{3}\" y=\"{4}\" "
        "text-anchor=\"end\">{5}</text>\n",
        Num(x0), Num(yy), Num(x0 + w), Num(x0 + w - 4), Num(yy - 4),
        Escape(r.label));
  }
}

// Series drawn as a grid of small plots, one per series, sharing the y axis:
// lines of GPUs with equal counts would hide each other in one plot.
// Returns the drawing and its height.
std::pair<std::string, double> RenderPanels(const XyChart& c, const YAxis& y) {
  constexpr size_t kColumns = 3;
  constexpr double kPanelHeight = 120, kPanelGapY = 64, kPanelLeft = 48;
  const size_t rows = (c.series.size() + kColumns - 1) / kColumns;
  const double cell_w = (kWidth - kLeft - kRight + kPanelLeft) / kColumns;
  const double w = cell_w - kPanelLeft;
  const double height =
      kTop + 22 + static_cast<double>(rows) * (kPanelHeight + kPanelGapY) + 4;
  std::string out = fmt::format(
      "<text class=\"axis-label\" x=\"{}\" y=\"{}\">{}; each plot: {}</text>\n",
      Num(kLeft), Num(kTop + 2), Escape(c.y_label), Escape(c.x_label));
  for (size_t i = 0; i < c.series.size(); ++i) {
    const double x0 = kLeft + cell_w * static_cast<double>(i % kColumns);
    const double top =
        kTop + 22 + 20 +
        (kPanelHeight + kPanelGapY) * static_cast<double>(i / kColumns);
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"10\" fill=\"{}\"/>"
        "<text class=\"panel-title\" x=\"{}\" y=\"{}\">{}"
        "<title>{}</title></text>\n",
        Num(x0), Num(top - 17), SeriesColour(i), Num(x0 + 19), Num(top - 8),
        Escape(Shorten(c.series[i].name, 44)), Escape(c.series[i].name));
    DrawPlot(out, c, y, {i}, x0, top, w, kPanelHeight, true);
  }
  return {out, height};
}

}  // namespace

std::string RenderXyChart(const XyChart& c) {
  size_t points = 0;
  for (const auto& s : c.series) points += s.points.size();
  if (points == 0) return Empty(c.id, c.title, c.empty_message);
  const YAxis y = MakeYAxis(c);

  if (c.panels) {
    const auto [body, height] = RenderPanels(c, y);
    return SvgOpen(c.id, c.title, height) + body + "</svg></figure>\n";
  }

  // Legend entries wrap into rows under the x axis.
  const double plot_w = kWidth - kLeft - kRight;
  std::vector<std::pair<double, double>> legend_pos;
  double lx = 0;
  int legend_rows = 1;
  for (const auto& s : c.series) {
    const double w =
        30 + kCharWidth * CodePoints(Shorten(s.name, kLegendChars));
    if (lx > 0 && lx + w > plot_w) {
      lx = 0;
      ++legend_rows;
    }
    legend_pos.emplace_back(lx, legend_rows - 1);
    lx += w;
  }
  const double legend_y = kTop + kPlotHeight + kAxisBelow + 12;
  const double height = legend_y + legend_rows * kLegendRow + 6;

  std::string out = SvgOpen(c.id, c.title, height);
  std::vector<size_t> all(c.series.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  DrawPlot(out, c, y, all, kLeft, kTop, plot_w, kPlotHeight, false);
  out += "<g class=\"legend\">";
  for (size_t i = 0; i < c.series.size(); ++i) {
    const double x = kLeft + legend_pos[i].first;
    const double yy = legend_y + legend_pos[i].second * kLegendRow;
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"10\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\">{}<title>{}</title></text>",
        Num(x), Num(yy - 9), SeriesColour(i), Num(x + 19), Num(yy),
        Escape(Shorten(c.series[i].name, kLegendChars)),
        Escape(c.series[i].name));
  }
  out += "</g>\n</svg></figure>\n";
  return out;
}

std::string RenderGantt(const GanttChart& c) {
  if (c.bars.empty()) return Empty(c.id, c.title, c.empty_message);
  constexpr double kLaneHeight = 24, kBarHeight = 16, kRowLabel = 130;
  constexpr size_t kMaxLanes = 6;
  const double x0 = kLeft + kRowLabel - 84;  // row labels replace y ticks
  const double plot_w = kWidth - x0 - kRight;
  const double x_max = c.x_max > 0 ? c.x_max : 1;
  auto px = [&](double x) {
    return x0 + plot_w * std::clamp(x / x_max, 0.0, 1.0);
  };

  // Lay out first: a bar and its label take the first lane of their row
  // where they overwrite nothing (evictions of two processes on one GPU
  // overlap); past kMaxLanes the bar goes where it overlaps least and its
  // label is left out (its tooltip stays).
  struct Placed {
    const Bar* bar;
    size_t lane;
    double x, w, lx;
    bool label_right, show_label;
    bool inside;  // neither side has room: written on the bar itself
    std::string label;
  };
  std::vector<const Bar*> bars;
  for (const auto& b : c.bars) bars.push_back(&b);
  std::stable_sort(bars.begin(), bars.end(), [](const Bar* a, const Bar* b) {
    return a->start < b->start;
  });
  std::map<std::string, std::vector<double>> lane_end;  // row -> lanes
  std::vector<Placed> placed;
  for (const Bar* b : bars) {
    Placed p{b,    0,     px(b->start),         0, 0, true,
             true, false, Shorten(b->label, 48)};
    // Short evictions (40 ms of a 120 s run) still get a visible bar.
    p.w = std::max(3.0, px(b->start + b->duration) - p.x);
    const double lw = kCharWidth * CodePoints(p.label);
    // Right of the bar, else left of it, else (a bar across most of the
    // plot) on it; a label never runs into the row labels.
    p.label_right = p.x + p.w + 4 + lw <= x0 + plot_w;
    const bool left = !p.label_right && p.x - 4 - lw >= x0;
    p.inside = !p.label_right && !left && lw + 8 <= p.w;
    p.show_label = p.label_right || left || p.inside;
    p.lx = p.label_right ? p.x + p.w + 4 : p.inside ? p.x + 4 : p.x - 4;
    const double from = left ? p.lx - lw : p.x;
    const double to = p.label_right ? p.lx + lw : p.x + p.w;
    auto& lanes = lane_end[b->row];
    auto free = std::find_if(lanes.begin(), lanes.end(),
                             [&](double e) { return e + 6 <= from; });
    if (free == lanes.end() && lanes.size() < kMaxLanes) {
      lanes.push_back(-1);
      free = lanes.end() - 1;
    } else if (free == lanes.end()) {
      free = std::min_element(lanes.begin(), lanes.end());
      p.show_label = false;
    }
    p.lane = static_cast<size_t>(free - lanes.begin());
    *free = std::max(*free, p.show_label ? to : p.x + p.w);
    placed.push_back(std::move(p));
  }
  std::map<std::string, std::pair<size_t, double>> rows;  // index, top
  double y = kTop;
  for (const auto& [row, lanes] : lane_end) {
    rows[row] = {rows.size(), y};
    y += kLaneHeight * static_cast<double>(lanes.size()) + 6;
  }
  const double bottom = y;
  const double height = bottom + kAxisBelow + 8;

  std::string out = SvgOpen(c.id, c.title, height);
  for (const auto& [name, row] : rows) {
    const double h =
        kLaneHeight * static_cast<double>(lane_end[name].size()) + 6;
    out += fmt::format(
        "<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}<title>{}</title>"
        "</text>\n",
        row.first % 2 ? "band-odd" : "band", Num(x0), Num(row.second),
        Num(plot_w), Num(h), Num(x0 - 6),
        Num(row.second + 3 + kLaneHeight / 2 + 4), Escape(Shorten(name, 18)),
        Escape(name));
  }
  out += fmt::format(
      "<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\"/>\n",
      Num(x0), Num(kTop), Num(bottom));
  DrawXAxis(out, x0, bottom, plot_w, x_max, c.x_label);

  for (const auto& p : placed) {
    const auto& row = rows[p.bar->row];
    const double top = row.second + 3 +
                       kLaneHeight * static_cast<double>(p.lane) +
                       (kLaneHeight - kBarHeight) / 2;
    out += fmt::format(
        "<rect class=\"bar{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
        "fill=\"{}\"><title>{}</title></rect>",
        p.bar->open ? " open" : "", Num(p.x), Num(top), Num(p.w),
        Num(kBarHeight), SeriesColour(row.first),
        Escape(p.bar->tooltip.empty() ? p.bar->label : p.bar->tooltip));
    if (p.show_label) {
      out += fmt::format(
          "<text{} x=\"{}\" y=\"{}\" text-anchor=\"{}\">{}</text>",
          p.inside ? " class=\"on-bar\"" : "", Num(p.lx),
          Num(top + kBarHeight - 4),
          p.label_right || p.inside ? "start" : "end", Escape(p.label));
    }
    out += "\n";
  }
  out += "</svg></figure>\n";
  return out;
}

}  // namespace gpuq::report::svg
