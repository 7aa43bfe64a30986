#include "nn/listeners/SvgLineChart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

namespace dl4cpp {

namespace {

// Geometry (SVG user units): the plot area, with the title above, tick labels left and below,
// and the legend in a column to the right.
constexpr double kWidth = 600, kHeight = 240;
constexpr double kLeft = 62, kRight = 430, kTop = 30, kBottom = 204;
constexpr double kLegendX = kRight + 12, kLegendRow = 16;

// Colours a reader can tell apart (the category10 palette), in series order.
constexpr const char* kPalette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

struct Axis {
  double low = 0, high = 1;
  std::vector<double> ticks;
};

// Ticks at a round step (1, 2 or 5 times a power of ten) covering [low, high], about `count` of
// them; the axis is widened to the outer ticks.
Axis niceAxis(double low, double high, double count = 4) {
  if (!(high > low)) {
    const double pad = low != 0 ? std::fabs(low) * 0.1 : 1;
    low -= pad;
    high += pad;
  }
  const double raw = (high - low) / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double r = raw / magnitude;
  const double step = (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * magnitude;
  Axis axis;
  axis.low = std::floor(low / step) * step;
  axis.high = std::ceil(high / step) * step;
  // Counted in whole steps, so rounding cannot add or lose the last tick; a span too wide for
  // doubles (a NaN count) draws no ticks rather than looping.
  const double steps = std::round((axis.high - axis.low) / step);
  for (int i = 0; i <= steps; ++i) {
    const double v = axis.low + i * step;
    axis.ticks.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  }
  return axis;
}

// Ticks at whole powers of ten (every second one past eight decades), on log10 values.
Axis logAxis(double low, double high) {
  Axis axis;
  axis.low = std::floor(low);
  axis.high = std::ceil(high);
  if (axis.high <= axis.low) axis.high = axis.low + 1;
  // log10 of a finite double lies within +-324: whole decades fit an int.
  const int step = axis.high - axis.low > 8 ? 2 : 1;
  for (int v = static_cast<int>(axis.low); v <= axis.high; v += step) axis.ticks.push_back(v);
  return axis;
}

bool drawable(const ChartPoint& p, ChartScale scale) {
  return std::isfinite(p.x) && std::isfinite(p.y) && (scale != ChartScale::Log10 || p.y > 0);
}

// The plotted y of a drawable point.
double plotted(double y, ChartScale scale) {
  return scale == ChartScale::Log10 ? std::log10(y) : y;
}

std::string yTickLabel(double v, ChartScale scale) {
  switch (scale) {
    case ChartScale::Log10:
      return fmt::format("1e{}", static_cast<int>(std::lround(v)));
    case ChartScale::Fraction:
      return fmt::format("{:.0f}%", v * 100);
    case ChartScale::Linear:
      break;
  }
  return fmt::format("{:.6g}", v);
}

}  // namespace

std::string escapeHtml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string renderSvg(const LineChart& chart) {
  // The drawable points of each series, and their extent.
  std::vector<std::vector<ChartPoint>> drawn;
  double xMin = std::numeric_limits<double>::infinity(), xMax = -xMin, yMin = xMin, yMax = -xMin;
  for (const ChartSeries& series : chart.series) {
    std::vector<ChartPoint>& points = drawn.emplace_back();
    for (const ChartPoint& p : series.points) {
      if (!drawable(p, chart.scale)) continue;
      const ChartPoint q{p.x, plotted(p.y, chart.scale)};
      points.push_back(q);
      xMin = std::min(xMin, q.x);
      xMax = std::max(xMax, q.x);
      yMin = std::min(yMin, q.y);
      yMax = std::max(yMax, q.y);
    }
  }
  const bool empty = !(xMin <= xMax);
  if (empty) xMin = 0, xMax = 1, yMin = 0, yMax = 1;
  const Axis x = niceAxis(xMin, xMax);
  const Axis y = chart.scale == ChartScale::Log10      ? logAxis(yMin, yMax)
                 : chart.scale == ChartScale::Fraction ? niceAxis(0, std::max(1.0, yMax))
                                                       : niceAxis(yMin, yMax);
  const auto px = [&](double v) {
    return kLeft + (v - x.low) / (x.high - x.low) * (kRight - kLeft);
  };
  const auto py = [&](double v) {
    return kBottom - (v - y.low) / (y.high - y.low) * (kBottom - kTop);
  };

  const std::string title = escapeHtml(chart.title);
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" data-chart=\"{}\" "
      "viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"{}\" "
      "font-family=\"sans-serif\" font-size=\"11\" fill=\"#333\">\n<title>{}</title>\n"
      "<text x=\"{}\" y=\"18\" font-size=\"13\" font-weight=\"bold\">{}</text>\n",
      escapeHtml(chart.id), kWidth, kHeight, kWidth, kHeight, title, title, kLeft, title);
  svg += "<g class=\"grid\" stroke=\"#e4e4e4\">\n";
  for (const double t : y.ticks)
    svg += fmt::format("<line x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>\n", kLeft, kRight,
                       py(t), py(t));
  for (const double t : x.ticks)
    svg += fmt::format("<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{}\" y2=\"{}\"/>\n", px(t), px(t),
                       kTop, kBottom);
  svg += "</g>\n<g class=\"ticks\">\n";
  for (const double t : y.ticks)
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLeft - 6,
                       py(t) + 4, yTickLabel(t, chart.scale));
  for (const double t : x.ticks)
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:.6g}</text>\n", px(t),
                       kBottom + 15, t);
  svg += fmt::format(
      "</g>\n<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#999\"/>\n"
      "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
      kLeft, kTop, kRight - kLeft, kBottom - kTop, (kLeft + kRight) / 2, kHeight - 6,
      escapeHtml(chart.xLabel));

  int legendRow = 0;
  for (size_t s = 0; s < chart.series.size(); ++s) {
    if (drawn[s].empty()) continue;
    const char* colour = kPalette[s % std::size(kPalette)];
    const std::string id = escapeHtml(chart.series[s].id);
    std::string points;
    for (const ChartPoint& p : drawn[s])
      points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", px(p.x), py(p.y));
    svg += fmt::format(
        "<polyline data-series=\"{}\" data-points=\"{}\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"1.5\" points=\"{}\"/>\n",
        id, drawn[s].size(), colour, points);
    if (chart.markers) {
      svg += fmt::format("<g data-markers=\"{}\" fill=\"{}\">", id, colour);
      for (const ChartPoint& p : drawn[s])
        svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\"/>", px(p.x), py(p.y));
      svg += "</g>\n";
    }
    const double rowY = kTop + 8 + kLegendRow * legendRow++;
    svg += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"3\"/>"
        "<text x=\"{}\" y=\"{}\">{}</text>\n",
        kLegendX, kLegendX + 16, rowY, rowY, colour, kLegendX + 22, rowY + 4,
        escapeHtml(chart.series[s].label));
  }
  if (empty)
    svg += fmt::format(
        "<text class=\"empty\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#888\">{}</text>\n",
        (kLeft + kRight) / 2, (kTop + kBottom) / 2, escapeHtml(chart.emptyText));
  svg += "</svg>\n";
  return svg;
}

}  // namespace dl4cpp
