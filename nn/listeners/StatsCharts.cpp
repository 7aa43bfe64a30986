#include "nn/listeners/StatsCharts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace dl4cpp {

namespace {

template <typename Record, typename Value>
ChartSeries seriesOf(std::string id, std::string label, const std::vector<Record>& records,
                     Value value) {
  ChartSeries series{std::move(id), std::move(label), {}};
  for (const Record& r : records)
    series.points.push_back({static_cast<double>(r.iteration), value(r)});
  return series;
}

double at(const std::vector<double>& values, size_t i) {
  return i < values.size() ? values[i] : kNoValue;
}

std::string layerLabel(const StatsSnapshot& stats, size_t layer) {
  return layer < stats.layerNames.size() ? stats.layerNames[layer] : fmt::format("layer {}", layer);
}

// One series per layer of a per-layer value (learning rate, update ratio).
template <typename Record>
std::vector<ChartSeries> perLayer(const StatsSnapshot& stats, const std::vector<Record>& records,
                                  const char* prefix, std::vector<double> Record::*values) {
  size_t layers = 0;
  for (const Record& r : records) layers = std::max(layers, (r.*values).size());
  std::vector<ChartSeries> series;
  for (size_t l = 0; l < layers; ++l)
    series.push_back(seriesOf(fmt::format("{}{}", prefix, l), layerLabel(stats, l), records,
                              [&](const Record& r) { return at(r.*values, l); }));
  return series;
}

struct Caption {
  const char* chart;
  const char* text;
};
constexpr Caption kCaptions[] = {
    {"score",
     "Training loss of each iteration (ParallelWrapper: of each averaging round), "
     "regularisation included."},
    {"validation", "Accuracy on the validation data, at the iterations it was measured."},
    {"learning-rate",
     "The learning rate each layer stepped with: its schedule, times "
     "ParallelWrapper's scaling by worker count."},
    {"throughput",
     "Examples per second: the model's (all) and each ParallelWrapper worker's "
     "while it trained."},
    {"time-shares",
     "Where a ParallelWrapper round's wall time went: averaging, workers waiting "
     "for the slowest, and waiting for data."},
    {"update-ratio",
     "Mean |update| / mean |parameter| per layer (log scale); around 1e-3 is "
     "healthy, far above or below suggests a learning rate too high or too low."},
};

std::string captionOf(const std::string& chart) {
  for (const Caption& c : kCaptions)
    if (chart == c.chart) return c.text;
  return {};
}

std::string summaryHtml(const StatsSnapshot& stats) {
  if (stats.iterations.empty())
    return "<p class=\"summary\">Waiting for the first iteration.</p>\n";
  const IterationRecord& last = stats.iterations.back();
  std::string text = fmt::format(
      "iteration <b>{}</b> &middot; epoch <b>{}</b> &middot; <b>{:.1f} s</b> &middot; score "
      "<b>{:.4f}</b>",
      last.iteration, last.epoch + 1, last.seconds, last.score);
  if (std::isfinite(last.examplesPerSecond))
    text += fmt::format(" &middot; <b>{:.0f}</b> examples/s", last.examplesPerSecond);
  if (!last.workerExamplesPerSecond.empty())
    text += fmt::format(" &middot; <b>{}</b> workers", last.workerExamplesPerSecond.size());
  if (!stats.validation.empty())
    text += fmt::format(" &middot; validation accuracy <b>{:.2f}%</b>",
                        100 * stats.validation.back().accuracy);
  return "<p class=\"summary\">" + text + "</p>\n";
}

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:16px;color:#222;background:#fff}"
    "h1{font-size:20px;margin:0 0 8px}"
    ".summary{font-size:14px;margin:4px 0 12px}"
    ".charts{display:flex;flex-wrap:wrap;gap:12px}"
    "figure{margin:0;border:1px solid #ddd;padding:6px;background:#fff}"
    "figcaption{font-size:12px;color:#555;max-width:600px}"
    "#status{font-size:12px;color:#777}";

}  // namespace

std::vector<LineChart> statsCharts(const StatsSnapshot& stats) {
  const auto& its = stats.iterations;
  std::vector<LineChart> charts;

  LineChart score{"score", "Score", "iteration", ChartScale::Linear, false, "no data yet", {}};
  score.series.push_back(
      seriesOf("score", "score", its, [](const IterationRecord& r) { return r.score; }));
  charts.push_back(std::move(score));

  LineChart validation{"validation", "Validation accuracy",      "iteration", ChartScale::Linear,
                       true,         "no validation points yet", {}};
  validation.series.push_back(seriesOf("accuracy", "accuracy", stats.validation,
                                       [](const ValidationRecord& r) { return r.accuracy; }));
  charts.push_back(std::move(validation));

  charts.push_back({"learning-rate", "Learning rate", "iteration", ChartScale::Linear, false,
                    "no data yet", perLayer(stats, its, "lr-", &IterationRecord::learningRates)});

  LineChart throughput{"throughput",
                       "Throughput (examples/s)",
                       "iteration",
                       ChartScale::Linear,
                       false,
                       "no data yet",
                       {}};
  throughput.series.push_back(
      seriesOf("all", "all", its, [](const IterationRecord& r) { return r.examplesPerSecond; }));
  size_t workers = 0;
  for (const IterationRecord& r : its)
    workers = std::max(workers, r.workerExamplesPerSecond.size());
  for (size_t w = 0; w < workers; ++w)
    throughput.series.push_back(
        seriesOf(fmt::format("worker-{}", w), fmt::format("worker {}", w), its,
                 [&](const IterationRecord& r) { return at(r.workerExamplesPerSecond, w); }));
  charts.push_back(std::move(throughput));

  LineChart shares{"time-shares", "Time shares of a round",      "iteration", ChartScale::Fraction,
                   false,         "ParallelWrapper rounds only", {}};
  shares.series.push_back(seriesOf("averaging", "averaging", its,
                                   [](const IterationRecord& r) { return r.averagingShare; }));
  shares.series.push_back(seriesOf("barrier", "barrier wait", its,
                                   [](const IterationRecord& r) { return r.barrierShare; }));
  shares.series.push_back(seriesOf("data-wait", "data wait", its,
                                   [](const IterationRecord& r) { return r.dataWaitShare; }));
  charts.push_back(std::move(shares));

  charts.push_back({"update-ratio", "Update : parameter ratio", "iteration", ChartScale::Log10,
                    false, "no ratios yet (one every reportEvery iterations)",
                    perLayer(stats, stats.updateRatios, "ratio-", &UpdateRatioRecord::ratios)});
  return charts;
}

std::string statsBodyHtml(const StatsSnapshot& stats) {
  std::string html = fmt::format("<div class=\"stats\" data-revision=\"{}\">\n", stats.revision);
  html += summaryHtml(stats);
  html += "<div class=\"charts\">\n";
  for (const LineChart& chart : statsCharts(stats))
    html += fmt::format("<figure>\n{}<figcaption>{}</figcaption>\n</figure>\n", renderSvg(chart),
                        escapeHtml(captionOf(chart.id)));
  html += "</div>\n</div>\n";
  return html;
}

std::string statsDocumentHtml(const StatsSnapshot& stats, std::string_view title,
                              std::string_view script) {
  const std::string heading = escapeHtml(title);
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
      heading, kStyle, heading);
  if (script.empty()) {
    html += statsBodyHtml(stats);
  } else {
    html += "<main id=\"live\">\n" + statsBodyHtml(stats) + "</main>\n<p id=\"status\"></p>\n";
    html += "<script>\n" + std::string(script) + "\n</script>\n";
  }
  html += "</body>\n</html>\n";
  return html;
}

}  // namespace dl4cpp
