#include <doctest/doctest.h>

#include <cmath>
#include <regex>
#include <string>

#include "nn/listeners/SvgLineChart.h"

using namespace dl4cpp;

namespace {

// The points="..." of the polyline of `series`, split into coordinate pairs.
std::vector<std::string> drawnPoints(const std::string& svg, const std::string& series) {
  const std::regex polyline("<polyline data-series=\"" + series +
                            "\" data-points=\"(\\d+)\"[^>]* points=\"([^\"]*)\"");
  std::smatch m;
  if (!std::regex_search(svg, m, polyline)) return {};
  std::vector<std::string> pairs;
  const std::string points = m[2];
  const std::regex pair("(-?[0-9.]+),(-?[0-9.]+)");
  for (auto it = std::sregex_iterator(points.begin(), points.end(), pair);
       it != std::sregex_iterator(); ++it)
    pairs.push_back(it->str());
  CHECK(std::stoul(m[1]) == pairs.size());
  return pairs;
}

}  // namespace

TEST_SUITE("listeners") {
  TEST_CASE("SvgLineChart: one polyline point per drawable value") {
    LineChart chart;
    chart.id = "score";
    chart.title = "Score";
    chart.series = {{"a", "a", {{1, 2.0}, {2, std::nan("")}, {3, 1.0}, {4, 0.5}}},
                    {"b", "b", {{1, 0.1}, {2, INFINITY}}},
                    {"none", "none", {{1, std::nan("")}}}};
    const std::string svg = renderSvg(chart);
    CHECK(svg.find("data-chart=\"score\"") != std::string::npos);
    CHECK(drawnPoints(svg, "a").size() == 3);
    CHECK(drawnPoints(svg, "b").size() == 1);
    // A series with nothing to draw has no polyline and no legend entry.
    CHECK(svg.find("data-series=\"none\"") == std::string::npos);
    CHECK(svg.find(">none<") == std::string::npos);
    CHECK(svg.find("class=\"empty\"") == std::string::npos);
    // The plot spans the x range: the first point at the left edge of the plot area (x = 1 on an
    // axis from 0 to 5 is a fifth of the way), all inside the view box.
    for (const std::string& p : drawnPoints(svg, "a")) {
      const double x = std::stod(p.substr(0, p.find(','))),
                   y = std::stod(p.substr(p.find(',') + 1));
      CHECK(x >= 0);
      CHECK(x <= 600);
      CHECK(y >= 0);
      CHECK(y <= 240);
    }
  }

  TEST_CASE("SvgLineChart: the log scale leaves out values <= 0, the fraction scale shows %") {
    LineChart log;
    log.id = "ratio";
    log.scale = ChartScale::Log10;
    log.series = {{"r", "r", {{1, 1e-3}, {2, 0.0}, {3, -1.0}, {4, 1e-2}}}};
    const std::string svg = renderSvg(log);
    CHECK(drawnPoints(svg, "r").size() == 2);
    CHECK(svg.find(">1e-3<") != std::string::npos);
    CHECK(svg.find(">1e-2<") != std::string::npos);

    LineChart shares;
    shares.id = "shares";
    shares.scale = ChartScale::Fraction;
    shares.series = {{"s", "s", {{1, 0.25}, {2, 0.5}}}};
    const std::string fraction = renderSvg(shares);
    CHECK(fraction.find(">100%<") != std::string::npos);
    CHECK(fraction.find(">0%<") != std::string::npos);
  }

  TEST_CASE("SvgLineChart: an empty chart says so, and names are escaped") {
    LineChart chart;
    chart.id = "v\"x";
    chart.title = "<script>alert('t')</script> & co";
    chart.emptyText = "no <points>";
    chart.series = {{"s", "s", {}}};
    const std::string svg = renderSvg(chart);
    CHECK(svg.find("<polyline") == std::string::npos);
    CHECK(svg.find("no &lt;points&gt;") != std::string::npos);
    CHECK(svg.find("<script") == std::string::npos);
    CHECK(svg.find("&lt;script&gt;alert(&#39;t&#39;)&lt;/script&gt; &amp; co") !=
          std::string::npos);
    CHECK(svg.find("data-chart=\"v&quot;x\"") != std::string::npos);

    chart.series = {{"s", "<b>\"layer\"</b>", {{1, 1}, {2, 2}}}};
    const std::string legend = renderSvg(chart);
    CHECK(legend.find("&lt;b&gt;&quot;layer&quot;&lt;/b&gt;") != std::string::npos);
    CHECK(legend.find("<b>") == std::string::npos);
    CHECK(escapeHtml("a&b<c>d\"e'f") == "a&amp;b&lt;c&gt;d&quot;e&#39;f");
  }
}
