// The HTML report and the charts it shows (StatsCharts): every record drawn, nothing external.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "TempDir.h"
#include "nn/core/Error.h"
#include "nn/listeners/HtmlReport.h"
#include "nn/listeners/StatsCharts.h"

using namespace dl4cpp;

namespace {

// Two layers (the second named with markup), 6 iterations of 2 workers, 2 ratio reports, 2
// validation points.
std::shared_ptr<StatsStorage> recordedRun() {
  auto storage = std::make_shared<StatsStorage>();
  storage->setLayerNames({"0: DenseLayer", "<out & \"put\">"});
  for (int64_t i = 1; i <= 6; ++i) {
    IterationRecord r;
    r.iteration = i;
    r.seconds = 0.1 * static_cast<double>(i);
    r.score = 2.0 / static_cast<double>(i);
    r.examples = 64;
    r.examplesPerSecond = 1000;
    r.workerExamplesPerSecond = {500, 510};
    r.learningRates = {0.01, kNoValue};  // the second layer without parameters
    r.averagingShare = 0.1;
    r.barrierShare = 0.05;
    r.dataWaitShare = i == 1 ? kNoValue : 0.01;
    storage->addIteration(r);
  }
  storage->addUpdateRatios({3, 0, 0.3, 1, {1e-3, 2e-3}});
  storage->addUpdateRatios({6, 0, 0.6, 1, {1e-3, 0.0}});  // a ratio of 0: not on the log axis
  storage->addValidation(3, 0, 0.9);
  storage->addValidation(6, 0, 0.95);
  return storage;
}

int pointsOf(const std::string& html, const std::string& series) {
  const std::regex polyline("data-series=\"" + series + "\" data-points=\"(\\d+)\"");
  std::smatch m;
  return std::regex_search(html, m, polyline) ? std::stoi(m[1]) : 0;
}

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_SUITE("listeners") {
  TEST_CASE("StatsCharts: six charts drawing every recorded value") {
    const std::string html = statsBodyHtml(recordedRun()->snapshot());
    for (const char* chart :
         {"score", "validation", "learning-rate", "throughput", "time-shares", "update-ratio"})
      CHECK_MESSAGE(html.find(std::string("data-chart=\"") + chart + "\"") != std::string::npos,
                    chart);
    CHECK(html.find("data-revision=\"10\"") != std::string::npos);
    CHECK(pointsOf(html, "score") == 6);
    CHECK(pointsOf(html, "accuracy") == 2);
    CHECK(pointsOf(html, "lr-0") == 6);
    CHECK(html.find("data-series=\"lr-1\"") == std::string::npos);
    CHECK(pointsOf(html, "all") == 6);
    CHECK(pointsOf(html, "worker-0") == 6);
    CHECK(pointsOf(html, "worker-1") == 6);
    CHECK(pointsOf(html, "averaging") == 6);
    CHECK(pointsOf(html, "data-wait") == 5);
    CHECK(pointsOf(html, "ratio-0") == 2);
    CHECK(pointsOf(html, "ratio-1") == 1);
    // Layer names are the user's text: escaped in legends.
    CHECK(html.find("&lt;out &amp; &quot;put&quot;&gt;") != std::string::npos);
    CHECK(html.find("<out") == std::string::npos);
    CHECK(html.find("iteration <b>6</b>") != std::string::npos);
    CHECK(html.find("validation accuracy <b>95.00%</b>") != std::string::npos);
  }

  TEST_CASE("HtmlReport: a self-contained file, written atomically, IoError when it cannot be") {
    testutil::TempDir dir;
    const auto storage = recordedRun();
    HtmlReport::write(*storage, dir / "report.html", "run <1>");
    const std::string html = readFile(dir / "report.html");
    CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
    CHECK(html.find("<title>run &lt;1&gt;</title>") != std::string::npos);
    CHECK(pointsOf(html, "score") == 6);
    CHECK(pointsOf(html, "worker-1") == 6);
    // Nothing to load: no script, no link, no src; the only URL is the SVG namespace.
    CHECK(html.find("<script") == std::string::npos);
    CHECK(html.find("src=") == std::string::npos);
    CHECK(html.find("href") == std::string::npos);
    CHECK(html.find("url(") == std::string::npos);
    std::string withoutNamespace =
        std::regex_replace(html, std::regex("http://www.w3.org/2000/svg"), "");
    CHECK(withoutNamespace.find("http") == std::string::npos);
    // The report shows what the storage holds when written.
    storage->addValidation(7, 1, 0.97);
    HtmlReport::write(*storage, dir / "report.html");
    CHECK(pointsOf(readFile(dir / "report.html"), "accuracy") == 3);

    CHECK_THROWS_AS(HtmlReport::write(*storage, dir / "no-such-dir" / "report.html"), IoError);
    CHECK_THROWS_AS(HtmlReport::write(*storage, dir.path()), IoError);
  }
}
