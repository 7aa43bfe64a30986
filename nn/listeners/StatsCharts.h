#pragma once
// StatsCharts: a StatsSnapshot as HTML, for the HTML report (HtmlReport.h) and the live training
// page (ui/UIServer.h). Both show the same markup: the page fetches statsBodyHtml() from its server
// and swaps it in, the report holds it once. Rendering on the C++ side for both keeps one
// implementation of the charts (and of their tests) instead of a C++ one and a JavaScript one.
//
// The charts (data-chart, then each series' data-series), x = iteration:
//   score          score                           the training loss (with regularisation)
//   validation     accuracy                        StatsStorage::addValidation points
//   learning-rate  lr-<layer>                      per layer with parameters
//   throughput     all, worker-<w>                 examples/s: the model's or the round's, and
//                                                  each ParallelWrapper worker's
//   time-shares    averaging, barrier, data-wait   shares of a ParallelWrapper round's wall time
//   update-ratio   ratio-<layer>                   mean |update| / mean |parameter|, log axis
#include <string>
#include <string_view>
#include <vector>

#include "nn/listeners/StatsStorage.h"
#include "nn/listeners/SvgLineChart.h"

namespace dl4cpp {

std::vector<LineChart> statsCharts(const StatsSnapshot& stats);

// <div class="stats" data-revision="R">: a summary line of the latest values, then one <figure>
// per chart (its SVG and a caption saying what it shows).
std::string statsBodyHtml(const StatsSnapshot& stats);

// A whole HTML document around statsBodyHtml(): title, inline stylesheet, no external resource.
// With a script, the body sits in <main id="live">, a <p id="status"> follows, and the script is
// inlined at the end (the live page's polling).
std::string statsDocumentHtml(const StatsSnapshot& stats, std::string_view title,
                              std::string_view script = {});

}  // namespace dl4cpp
