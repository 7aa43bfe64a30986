// ParallelWrapper's averaging warm-up (rounds of one iteration for the first W iterations, then k)
// and its learning-rate scaling by worker count (LINEAR, SQRT, with a gradual warm-up).
#include <doctest/doctest.h>

#include <cmath>

#include "parallel/ParallelTestUtil.h"

using namespace dl4cpp;
using namespace dl4cpp::parallel;
using testutil::VectorIterator;

namespace {

// What a listener sees after every round: the root's iteration count and the scale.
struct RoundLog : TrainingListener {
  std::vector<int64_t> iterations;
  std::vector<double> scales;
  std::vector<std::vector<WorkerTiming>> workers;
  void iterationDone(const Model&, const IterationInfo& info) override {
    iterations.push_back(info.iteration);
    scales.push_back(info.learningRateScale);
    workers.emplace_back(info.workers.begin(), info.workers.end());
  }
};

struct Run {
  MultiLayerNetwork root;
  std::shared_ptr<RoundLog> log = std::make_shared<RoundLog>();
};

// The root after one epoch of `data` on 2 workers, configured by `configure`.
template <typename Configure>
Run wrapped(const UpdaterParams& updater, const std::vector<DataSet>& data, Configure configure,
            TrainingMode mode = TrainingMode::AVERAGING) {
  Run run{MultiLayerNetwork(testutil::smallNet(updater))};
  run.root.init();
  auto builder = testutil::wrapperOnCpu(run.root).workers(2).threadsPerWorker(1).trainingMode(mode);
  configure(builder);
  auto wrapper = builder.setListeners({run.log}).build();
  VectorIterator it(data);
  wrapper.fit(it);
  return run;
}

const auto kNoChange = [](ParallelWrapper::Builder&) {};

}  // namespace

TEST_SUITE("parallel") {
  TEST_CASE("learningRateScaleAt: LINEAR is the worker count, SQRT its root, ramped from 1") {
    CHECK(learningRateScaleAt(LearningRateScaling::NONE, 4, 0, 7) == 1.0);
    CHECK(learningRateScaleAt(LearningRateScaling::LINEAR, 4, 0, 0) == 4.0);
    CHECK(learningRateScaleAt(LearningRateScaling::SQRT, 4, 0, 0) == 2.0);
    // Warm-up over 10 iterations: 1 at iteration 0, the full factor from iteration 10 on.
    CHECK(learningRateScaleAt(LearningRateScaling::LINEAR, 4, 10, 0) == 1.0);
    CHECK(learningRateScaleAt(LearningRateScaling::LINEAR, 4, 10, 5) == doctest::Approx(2.5));
    CHECK(learningRateScaleAt(LearningRateScaling::LINEAR, 4, 10, 10) == 4.0);
    CHECK(learningRateScaleAt(LearningRateScaling::LINEAR, 4, 10, 1000) == 4.0);
    CHECK(learningRateScaleAt(LearningRateScaling::SQRT, 9, 4, 2) == doctest::Approx(2.0));
    CHECK(learningRateScaleAt(LearningRateScaling::LINEAR, 1, 10, 3) == 1.0);
  }

  TEST_CASE(
      "ParallelWrapper: averagingWarmup averages every iteration for W iterations, then every k") {
    // 20 minibatches on 2 workers: 4 rounds of 1 iteration (8 minibatches), then rounds of 3.
    const auto data = testutil::batches(20, 4, 5);
    const Run run = wrapped(Nesterovs(0.1, 0.9), data,
                            [](auto& b) { b.averagingFrequency(3).averagingWarmup(4); });
    CHECK(run.log->iterations == std::vector<int64_t>{1, 2, 3, 4, 7, 10});
    CHECK(run.root.getIterationCount() == 10);

    // A warm-up longer than the run is k = 1 throughout, bit for bit; without one, k = 3 differs.
    const Run everyStep =
        wrapped(Nesterovs(0.1, 0.9), data, [](auto& b) { b.averagingFrequency(1); });
    const Run longWarmup = wrapped(Nesterovs(0.1, 0.9), data,
                                   [](auto& b) { b.averagingFrequency(3).averagingWarmup(1000); });
    CHECK(testutil::bitIdentical(longWarmup.root.params(), everyStep.root.params()));
    const Run noWarmup =
        wrapped(Nesterovs(0.1, 0.9), data, [](auto& b) { b.averagingFrequency(3); });
    CHECK_FALSE(noWarmup.root.params().allClose(run.root.params(), 1e-6f));
    CHECK_FALSE(run.root.params().allClose(everyStep.root.params(), 1e-6f));
  }

  TEST_CASE("ParallelWrapper: LINEAR and SQRT scaling train as the scaled learning rate would") {
    const auto data = testutil::batches(12, 4, 6);
    for (const TrainingMode mode : {TrainingMode::AVERAGING, TrainingMode::SHARED_GRADIENTS}) {
      CAPTURE(static_cast<int>(mode));
      const Run linear = wrapped(
          Sgd(0.1), data,
          [](auto& b) { b.averagingFrequency(3).learningRateScaling(LearningRateScaling::LINEAR); },
          mode);
      const Run doubled = wrapped(
          Sgd(0.1 * 2.0), data, [](auto& b) { b.averagingFrequency(3); }, mode);
      CHECK(testutil::bitIdentical(linear.root.params(), doubled.root.params()));
      const Run root2 = wrapped(
          Sgd(0.1), data,
          [](auto& b) { b.averagingFrequency(3).learningRateScaling(LearningRateScaling::SQRT); },
          mode);
      const Run byRoot2 = wrapped(
          Sgd(0.1 * std::sqrt(2.0)), data, [](auto& b) { b.averagingFrequency(3); }, mode);
      CHECK(testutil::bitIdentical(root2.root.params(), byRoot2.root.params()));
      const Run plain = wrapped(
          Sgd(0.1), data, [](auto& b) { b.averagingFrequency(3); }, mode);
      CHECK_FALSE(plain.root.params().allClose(linear.root.params(), 1e-6f));
      // The root's own multiplier is left alone; listeners get the wrapper's.
      CHECK(linear.root.learningRateScale() == 1.0);
      for (double s : linear.log->scales) CHECK(s == 2.0);
      for (double s : plain.log->scales) CHECK(s == 1.0);
    }
  }

  TEST_CASE("ParallelWrapper: the scaling warm-up ramps the rate per iteration, inside rounds") {
    // Rounds of 3; warm-up over 6 iterations: the rounds end at iterations 2, 5, 8 (0-based).
    const auto data = testutil::batches(18, 4, 7);
    const Run ramped = wrapped(Sgd(0.1), data, [](auto& b) {
      b.averagingFrequency(3).learningRateScaling(LearningRateScaling::LINEAR, 6);
    });
    CHECK(ramped.log->scales == std::vector<double>{1.0 + 2.0 / 6, 1.0 + 5.0 / 6, 2.0});
    // Between the unscaled and the fully scaled runs, equal to neither.
    const Run full = wrapped(Sgd(0.1), data, [](auto& b) {
      b.averagingFrequency(3).learningRateScaling(LearningRateScaling::LINEAR);
    });
    const Run plain = wrapped(Sgd(0.1), data, [](auto& b) { b.averagingFrequency(3); });
    CHECK_FALSE(ramped.root.params().allClose(full.root.params(), 1e-6f));
    CHECK_FALSE(ramped.root.params().allClose(plain.root.params(), 1e-6f));
  }

  TEST_CASE("ParallelWrapper: listeners get each worker's examples and compute time per round") {
    // 7 minibatches of 4 examples, the last of 2, rounds of 2 per worker: worker 0 trains
    // minibatches 0, 2 | 4, 6; worker 1 trains 1, 3 | 5.
    const auto data = testutil::batches(7, 4, 8, 2);
    const Run run = wrapped(Sgd(0.1), data, [](auto& b) { b.averagingFrequency(2); });
    REQUIRE(run.log->workers.size() == 2);
    for (const auto& round : run.log->workers) {
      REQUIRE(round.size() == 2);
      for (const WorkerTiming& w : round) CHECK(w.compute > 0);
    }
    CHECK(run.log->workers[0][0].examples == 8);
    CHECK(run.log->workers[0][1].examples == 8);
    CHECK(run.log->workers[1][0].examples == 6);
    CHECK(run.log->workers[1][1].examples == 4);
    CHECK(run.log->workers[1][0].samplesPerSecond() > 0);
  }

  TEST_CASE("ParallelWrapper: negative warm-ups are a ConfigError naming the option") {
    MultiLayerNetwork root(testutil::smallNet(Sgd(0.1)));
    root.init();
    CHECK_THROWS_WITH_AS(testutil::wrapperOnCpu(root).averagingWarmup(-1).build(),
                         doctest::Contains("averagingWarmup"), ConfigError);
    CHECK_THROWS_WITH_AS(
        testutil::wrapperOnCpu(root).learningRateScaling(LearningRateScaling::LINEAR, -5).build(),
        doctest::Contains("learningRateScaling"), ConfigError);
  }
}
