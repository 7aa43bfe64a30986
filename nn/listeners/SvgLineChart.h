#pragma once
// SvgLineChart: a line chart as one inline <svg> element, drawn in C++ (no script, font or file
// outside the element). The HTML report and the live training page both show charts made here
// (StatsCharts.h), so they look alike and one set of tests covers them.
//
// The element's structure, which tests and tools may rely on:
//   <svg class="chart" data-chart="ID" ...>            one per chart
//     <polyline data-series="ID" data-points="N" points="x,y x,y ..."/>   one per series that
//         has a drawable point, N points; a point is drawable when x and y are finite (and, on
//         the log scale, y > 0)
//     <g data-markers="ID"> <circle/> x N </g>          with markers, per series
//     <text class="empty">...</text>                    when no series has a drawable point
// Text (title, labels) is escaped; colours and fonts are attributes, so no stylesheet is needed.
#include <string>
#include <string_view>
#include <vector>

namespace dl4cpp {

struct ChartPoint {
  double x = 0;
  double y = 0;
};

struct ChartSeries {
  std::string id;     // data-series
  std::string label;  // legend
  std::vector<ChartPoint> points;
};

enum class ChartScale {
  Linear,    // y from the data's range, rounded out to tick steps
  Log10,     // y on a log axis with a tick at each power of ten
  Fraction,  // y from 0 to 1 (or the data's maximum, when above), ticks in percent
};

struct LineChart {
  std::string id;  // data-chart
  std::string title;
  std::string xLabel = "iteration";
  ChartScale scale = ChartScale::Linear;
  bool markers = false;                   // a dot on every point (sparse series)
  std::string emptyText = "no data yet";  // shown when nothing is drawable
  std::vector<ChartSeries> series;
};

std::string renderSvg(const LineChart& chart);

// Text made safe for HTML and SVG content and attribute values (& < > " ').
std::string escapeHtml(std::string_view text);

}  // namespace dl4cpp
