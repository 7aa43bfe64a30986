// StatsListener's records: score, learning rates, throughput, ParallelWrapper's time shares and
// per-worker throughput, and the update:parameter ratios against a hand computation with SGD.
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>

#include "TempDir.h"
#include "nn/listeners/StatsListener.h"
#include "parallel/ParallelTestUtil.h"

using namespace dl4cpp;
using testutil::VectorIterator;

namespace {

// What fit() told the listeners, and the root's parameters, at every call.
struct InfoLog : TrainingListener {
  std::vector<IterationInfo> infos;
  std::vector<RoundTiming> timings;
  std::vector<std::vector<WorkerTiming>> workers;
  std::vector<std::vector<float>> params;
  void iterationDone(const Model& model, const IterationInfo& info) override {
    infos.push_back(info);
    timings.push_back(info.timing ? *info.timing : RoundTiming{});
    workers.emplace_back(info.workers.begin(), info.workers.end());
    params.push_back(model.params().toVector());
  }
};

// A clock that moves half a second each time it is read.
StatsListener::Clock steppingClock() {
  auto now = std::make_shared<std::chrono::steady_clock::time_point>();
  return [now] {
    *now += std::chrono::milliseconds(500);
    return *now;
  };
}

// mean |after - before| / mean |after| over [begin, end).
double ratio(const std::vector<float>& before, const std::vector<float>& after, size_t begin,
             size_t end) {
  double update = 0, magnitude = 0;
  for (size_t i = begin; i < end; ++i) {
    update += std::fabs(static_cast<double>(after[i]) - before[i]);
    magnitude += std::fabs(static_cast<double>(after[i]));
  }
  return update / magnitude;
}

// smallNet's layers: Dense 6 -> 10 (70 parameters), then Output 10 -> 3 (33).
constexpr size_t kDenseParams = size_t{6} * 10 + 10, kAllParams = kDenseParams + size_t{10} * 3 + 3;

// What a file held at each epoch's end (after the listeners before this one).
struct FileAtEpochEnd : TrainingListener {
  explicit FileAtEpochEnd(std::filesystem::path p) : path(std::move(p)) {}
  void iterationDone(const Model&, const IterationInfo&) override {}
  void onEpochEnd(const Model&, int) override {
    std::ifstream in(path);
    contents.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::filesystem::path path;
  std::vector<std::string> contents;
};

}  // namespace

TEST_SUITE("listeners") {
  TEST_CASE("StatsListener: score, learning rates and throughput of a single model") {
    MultiLayerNetwork model(testutil::smallNet(Sgd(0.1)));
    model.init();
    model.setLearningRateScale(0.5);
    auto storage = std::make_shared<StatsStorage>();
    auto log = std::make_shared<InfoLog>();
    model.setListeners({std::make_shared<StatsListener>(storage, 10, steppingClock()), log});
    VectorIterator data(testutil::batches(4, 8));
    model.fit(data);

    const StatsSnapshot s = storage->snapshot();
    CHECK(s.layerNames == std::vector<std::string>{"0: DenseLayer", "1: OutputLayer"});
    REQUIRE(s.iterations.size() == 4);
    for (size_t i = 0; i < 4; ++i) {
      const IterationRecord& r = s.iterations[i];
      CHECK(r.iteration == static_cast<int64_t>(i + 1));
      CHECK(r.epoch == 0);
      CHECK(r.score == log->infos[i].score);
      CHECK(r.examples == 8);
      // onEpochStart read the clock at 0.5 s, each iteration half a second later.
      CHECK(r.seconds == doctest::Approx(0.5 * static_cast<double>(i + 1)));
      CHECK(r.examplesPerSecond == doctest::Approx(8 / 0.5));
      // Sgd(0.1) times the model's own scale.
      CHECK(r.learningRates == std::vector<double>{0.05, 0.05});
      CHECK(r.workerExamplesPerSecond.empty());
      CHECK(std::isnan(r.averagingShare));
      CHECK(std::isnan(r.barrierShare));
      CHECK(std::isnan(r.dataWaitShare));
    }
    CHECK(s.updateRatios.empty());  // fewer than reportEvery iterations
  }

  TEST_CASE("StatsListener: records fit(DataSet) as it records fit(iterator)") {
    MultiLayerNetwork model(testutil::smallNet(Sgd(0.1)));
    model.init();
    auto storage = std::make_shared<StatsStorage>();
    auto log = std::make_shared<InfoLog>();
    model.setListeners({std::make_shared<StatsListener>(storage, 2, steppingClock()), log});
    const auto batches = testutil::batches(3, 8);
    for (const DataSet& batch : batches) model.fit(batch);

    const StatsSnapshot s = storage->snapshot();
    CHECK(s.layerNames == std::vector<std::string>{"0: DenseLayer", "1: OutputLayer"});
    REQUIRE(s.iterations.size() == 3);
    REQUIRE(log->infos.size() == 3);
    for (size_t i = 0; i < 3; ++i) {
      const IterationRecord& r = s.iterations[i];
      CHECK(r.iteration == static_cast<int64_t>(i + 1));
      CHECK(r.epoch == 0);
      CHECK(r.examples == 8);
      CHECK(r.score == log->infos[i].score);
      CHECK(log->infos[i].examplesInEpoch == static_cast<int64_t>(8 * (i + 1)));
      CHECK(log->infos[i].examplesPerEpoch == -1);
      CHECK(r.learningRates == std::vector<double>{0.1, 0.1});
    }
    // The first call has no epoch start to time from; the next ones half a second each.
    CHECK(std::isnan(s.iterations[0].examplesPerSecond));
    CHECK(s.iterations[1].examplesPerSecond == doctest::Approx(8 / 0.5));
    // Every 2 iterations: the ratio at iteration 2, from the copy taken at iteration 1.
    REQUIRE(s.updateRatios.size() == 1);
    CHECK(s.updateRatios[0].iteration == 2);
    CHECK(s.updateRatios[0].span == 1);
  }

  TEST_CASE("StatsListener: update:parameter ratios of SGD steps, by hand") {
    const double lr = 0.1;
    MultiLayerNetwork model(testutil::smallNet(Sgd(lr)));
    model.init();
    MultiLayerNetwork replay = model.clone();
    auto storage = std::make_shared<StatsStorage>();
    model.setListeners({std::make_shared<StatsListener>(storage, 2)});
    const auto batches = testutil::batches(5, 8);
    VectorIterator data(batches);
    model.fit(data);

    // Reports at iterations 2 and 4, each of the step that reached it: with SGD and no
    // regularisation the update is lr times the gradient at the parameters before the step.
    const StatsSnapshot s = storage->snapshot();
    REQUIRE(s.updateRatios.size() == 2);
    for (size_t b = 0; b < batches.size(); ++b) {
      const bool reported = b == 1 || b == 3;
      if (reported) {
        replay.computeGradientAndScore(batches[b]);
        const std::vector<float> before = replay.params().toVector();
        const std::vector<float> gradient = replay.gradient().toVector();
        double update[2] = {0, 0}, magnitude[2] = {0, 0};
        for (size_t i = 0; i < before.size(); ++i) {
          const double step = lr * gradient[i];
          const double p = before[i] - step;
          const int layer = i < kDenseParams ? 0 : 1;
          update[layer] += std::fabs(step);
          magnitude[layer] += std::fabs(p);
        }
        const UpdateRatioRecord& r = s.updateRatios[b == 1 ? 0 : 1];
        CHECK(r.iteration == static_cast<int64_t>(b + 1));
        CHECK(r.span == 1);
        REQUIRE(r.ratios.size() == 2);
        CHECK(r.ratios[0] == doctest::Approx(update[0] / magnitude[0]).epsilon(1e-4));
        CHECK(r.ratios[1] == doctest::Approx(update[1] / magnitude[1]).epsilon(1e-4));
        CHECK(r.ratios[0] > 0);
      }
      replay.fit(batches[b]);
    }
  }

  TEST_CASE("StatsListener: a 2-worker ParallelWrapper's shares, throughput and ratios") {
    MultiLayerNetwork root(testutil::smallNet(Sgd(0.1)));
    root.init();
    const std::vector<float> initial = root.params().toVector();
    auto storage = std::make_shared<StatsStorage>();
    auto log = std::make_shared<InfoLog>();
    auto wrapper = testutil::wrapperOnCpu(root)
                       .workers(2)
                       .threadsPerWorker(1)
                       .averagingFrequency(2)
                       .learningRateScaling(parallel::LearningRateScaling::LINEAR)
                       .build();
    wrapper.setListeners({std::make_shared<StatsListener>(storage, 4), log});
    VectorIterator data(testutil::batches(12, 8));
    wrapper.fit(data);

    // 12 minibatches, 2 workers, 2 each per round: 3 rounds, ending at iterations 2, 4, 6.
    const StatsSnapshot s = storage->snapshot();
    REQUIRE(s.iterations.size() == 3);
    for (size_t k = 0; k < 3; ++k) {
      const IterationRecord& r = s.iterations[k];
      const RoundTiming& t = log->timings[k];
      CHECK(r.iteration == static_cast<int64_t>(2 * (k + 1)));
      CHECK(r.score == log->infos[k].score);
      CHECK(r.examples == 32);
      CHECK(r.examplesPerSecond == doctest::Approx(32 / t.wall));
      REQUIRE(r.workerExamplesPerSecond.size() == 2);
      for (size_t w = 0; w < 2; ++w) {
        CHECK(log->workers[k][w].examples == 16);
        CHECK(r.workerExamplesPerSecond[w] == doctest::Approx(16 / log->workers[k][w].compute));
      }
      CHECK(r.averagingShare == doctest::Approx(t.averaging / t.wall));
      CHECK(r.barrierShare == doctest::Approx(t.barrierWait / t.wall));
      CHECK(r.dataWaitShare == doctest::Approx(t.dataWait / t.wall));
      CHECK(r.averagingShare >= 0);
      CHECK(r.averagingShare + r.barrierShare + r.dataWaitShare <= 1.0 + 1e-9);
      // Sgd(0.1), scaled by the worker count (LINEAR).
      CHECK(r.learningRates == std::vector<double>{0.2, 0.2});
    }
    // The report at iteration 4 covers the round 2 -> 4: the root's parameters between those.
    REQUIRE(s.updateRatios.size() == 1);
    const UpdateRatioRecord& r = s.updateRatios[0];
    CHECK(r.iteration == 4);
    CHECK(r.span == 2);
    CHECK(r.ratios[0] == doctest::Approx(ratio(log->params[0], log->params[1], 0, kDenseParams)));
    CHECK(r.ratios[1] ==
          doctest::Approx(ratio(log->params[0], log->params[1], kDenseParams, kAllParams)));
    CHECK(r.ratios[0] != doctest::Approx(ratio(initial, log->params[1], 0, kDenseParams)));
  }

  TEST_CASE("StatsListener: the report written at every epoch's end shows the run so far") {
    testutil::TempDir dir;
    const auto path = dir / "report.html";
    MultiLayerNetwork model(testutil::smallNet(Sgd(0.1)));
    model.init();
    auto storage = std::make_shared<StatsStorage>();
    auto stats = std::make_shared<StatsListener>(storage);
    stats->writeReportAtEpochEnd(path);
    auto reader = std::make_shared<FileAtEpochEnd>(path);
    model.setListeners({stats, reader});
    VectorIterator data(testutil::batches(3, 8));
    model.fit(data, 2);
    const auto& atEpochEnd = reader->contents;
    REQUIRE(atEpochEnd.size() == 2);
    CHECK(atEpochEnd[0].find("data-series=\"score\" data-points=\"3\"") != std::string::npos);
    CHECK(atEpochEnd[1].find("data-series=\"score\" data-points=\"6\"") != std::string::npos);

    // A path that cannot be written is refused when it is set, before training.
    CHECK_THROWS_WITH_AS(stats->writeReportAtEpochEnd(dir / "no-such-dir" / "report.html"),
                         doctest::Contains("does not exist"), OutputPathError);
    // One that stops being writable is the IoError of the epoch's end, out of fit().
    std::filesystem::create_directory(dir / "gone");
    stats->writeReportAtEpochEnd(dir / "gone" / "report.html");
    std::filesystem::remove(dir / "gone");
    data.reset();
    CHECK_THROWS_AS(model.fit(data), IoError);
  }

  TEST_CASE("StatsListener: bad settings are ConfigErrors") {
    CHECK_THROWS_AS(StatsListener(nullptr), ConfigError);
    CHECK_THROWS_WITH_AS(StatsListener(std::make_shared<StatsStorage>(), 0),
                         doctest::Contains("reportEvery must be >= 1, got 0"), ConfigError);
  }
}
