#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "TrainingSnapshots.h"
#include "nn/util/ModelFileTestUtil.h"
#include "parallel/ParallelTestUtil.h"

using namespace dl4cpp;
using testutil::NoResetIterator;
using testutil::VectorIterator;

namespace {

const MultiLayerConfiguration& conf() {
  static const MultiLayerConfiguration c = testutil::smallNet(Sgd(0.3));
  return c;
}

MultiLayerNetwork initialized() {
  MultiLayerNetwork m(conf(), Device::cpu(), 1);
  m.init();
  return m;
}

// Validation batches of 10 rows: larger than the training batches of 4, so evaluating needs
// bigger forward buffers than training.
std::vector<DataSet> validationData() { return testutil::batches(3, 10, 99); }

// What an independent network holding `params` scores on the validation data.
std::string confusionOf(const std::vector<float>& params) {
  MultiLayerNetwork m = initialized();
  m.setParams(Tensor::fromVector(Shape{m.numParams()}, params));
  VectorIterator validation(validationData());
  return m.evaluate(validation).confusionMatrix();
}

// Every result was evaluated on the model as it was at that result's iteration.
void checkResultsMatch(const EvaluativeListener& listener,
                       const testutil::ParameterSnapshots& snapshots) {
  for (const ValidationResult& r : listener.results()) {
    CAPTURE(r.iteration);
    REQUIRE(snapshots.atIteration.count(r.iteration) == 1);
    CHECK(r.evaluation.getNumRowCounter() == 30);
    CHECK(r.accuracy == r.evaluation.accuracy());
    CHECK(r.evaluation.confusionMatrix() == confusionOf(snapshots.atIteration.at(r.iteration)));
  }
}

std::vector<int64_t> iterationsOf(const EvaluativeListener& listener) {
  std::vector<int64_t> out;
  for (const ValidationResult& r : listener.results()) out.push_back(r.iteration);
  return out;
}

std::vector<int> epochsOf(const EvaluativeListener& listener) {
  std::vector<int> out;
  for (const ValidationResult& r : listener.results()) out.push_back(r.epoch);
  return out;
}

}  // namespace

TEST_SUITE("listeners") {
  TEST_CASE("EvaluativeListener: every 5 iterations of a single model, on the model of the time") {
    MultiLayerNetwork model = initialized();
    VectorIterator validation(validationData());
    auto listener = std::make_shared<EvaluativeListener>(validation, 5);
    CHECK(listener->invocationType() == InvocationType::ITERATION_END);
    std::vector<int64_t> called;
    listener->setCallback([&](const ValidationResult& r) { called.push_back(r.iteration); });
    auto snapshots = std::make_shared<testutil::ParameterSnapshots>();
    model.setListeners({listener, snapshots});
    VectorIterator train(testutil::batches(12, 4));
    model.fit(train, 2);  // iterations 1..24
    CHECK(iterationsOf(*listener) == std::vector<int64_t>{5, 10, 15, 20});
    CHECK(epochsOf(*listener) == std::vector<int>{0, 0, 1, 1});
    CHECK(called == iterationsOf(*listener));
    checkResultsMatch(*listener, *snapshots);
    // Training moved the model: the evaluations are not all of one model.
    CHECK(listener->results().front().evaluation.confusionMatrix() !=
          listener->results().back().evaluation.confusionMatrix());
  }

  TEST_CASE("EvaluativeListener: evaluating leaves training exactly as it was") {
    const auto trainData = testutil::batches(12, 4);
    MultiLayerNetwork plain = initialized();
    VectorIterator plainTrain(trainData);
    plain.fit(plainTrain, 2);

    MultiLayerNetwork watched = initialized();
    VectorIterator validation(validationData());
    validation.next();  // left part-way: each evaluation starts from the first batch anyway
    auto listener = std::make_shared<EvaluativeListener>(validation, 1);
    watched.setListeners({listener});
    VectorIterator watchedTrain(trainData);
    watched.fit(watchedTrain, 2);

    CHECK(listener->results().size() == 24);
    CHECK(testutil::bitIdentical(watched.params().toVector(), plain.params().toVector()));
    CHECK(
        testutil::bitIdentical(watched.updaterState().toVector(), plain.updaterState().toVector()));
    CHECK(watched.score() == plain.score());
    CHECK(watched.getIterationCount() == plain.getIterationCount());
    CHECK(watched.getEpochCount() == plain.getEpochCount());
    CHECK(watchedTrain.served() == plainTrain.served());
    for (const ValidationResult& r : listener->results())
      CHECK(r.evaluation.getNumRowCounter() == 30);
  }

  TEST_CASE("EvaluativeListener: every 2 epochs at EPOCH_END") {
    MultiLayerNetwork model = initialized();
    VectorIterator validation(validationData());
    auto listener = std::make_shared<EvaluativeListener>(validation, 2, InvocationType::EPOCH_END);
    auto snapshots = std::make_shared<testutil::ParameterSnapshots>();
    model.setListeners({listener, snapshots});
    VectorIterator train(testutil::batches(3, 4));
    model.fit(train, 5);  // epochs 0..4, 3 iterations each
    CHECK(epochsOf(*listener) == std::vector<int>{1, 3});
    CHECK(iterationsOf(*listener) == std::vector<int64_t>{6, 12});
    checkResultsMatch(*listener, *snapshots);
  }

  TEST_CASE("EvaluativeListener: ParallelWrapper rounds of 3 iterations, every 5 iterations") {
    // 2 workers, averaging every 3: each round trains 6 minibatches and advances the count by 3
    // (3, 6, 9, ...). Evaluations come at the rounds that cross a multiple of 5.
    MultiLayerNetwork root = initialized();
    VectorIterator validation(validationData());
    auto listener = std::make_shared<EvaluativeListener>(validation, 5);
    auto snapshots = std::make_shared<testutil::ParameterSnapshots>();
    auto wrapper = testutil::wrapperOnCpu(root)
                       .workers(2)
                       .averagingFrequency(3)
                       .threadsPerWorker(1)
                       .setListeners({listener, snapshots})
                       .build();
    VectorIterator train(testutil::batches(24, 4));
    wrapper.fit(train, 2);  // 4 rounds per epoch: iterations 3, 6, ..., 24
    CHECK(root.getIterationCount() == 24);
    CHECK(iterationsOf(*listener) == std::vector<int64_t>{6, 12, 15, 21});
    CHECK(epochsOf(*listener) == std::vector<int>{0, 0, 1, 1});
    // Each evaluation saw the averaged root model of its round.
    checkResultsMatch(*listener, *snapshots);
  }

  TEST_CASE("EvaluativeListener: moved to a model of another configuration, it evaluates that") {
    // Same parameter count, another activation: a copy of the first model holding the second
    // model's parameters would score differently from the second model itself.
    VectorIterator validation(validationData());
    auto listener = std::make_shared<EvaluativeListener>(validation, 2);
    MultiLayerNetwork first = initialized();
    first.setListeners({listener});
    VectorIterator train(testutil::batches(2, 4));
    first.fit(train);
    MultiLayerNetwork second(
        NeuralNetConfiguration::Builder()
            .seed(12)
            .updater(Sgd(0.3))
            .list()
            .layer(DenseLayer::Builder().nIn(6).nOut(10).activation(Activation::RELU).build())
            .layer(OutputLayer::Builder(LossFunction::MCXENT)
                       .nOut(3)
                       .activation(Activation::SOFTMAX)
                       .build())
            .build(),
        Device::cpu(), 1);
    second.init();
    REQUIRE(second.numParams() == first.numParams());
    second.setListeners({listener});
    train.reset();
    second.fit(train);
    REQUIRE(listener->results().size() == 2);
    CHECK(listener->results().back().evaluation.confusionMatrix() ==
          second.evaluate(validation).confusionMatrix());
  }

  TEST_CASE("EvaluativeListener: its callback feeds a StatsStorage's validation series") {
    VectorIterator validation(validationData());
    auto listener = std::make_shared<EvaluativeListener>(validation, 3);
    auto storage = std::make_shared<StatsStorage>();
    listener->setCallback([&](const ValidationResult& r) {
      storage->addValidation(r.iteration, r.epoch, r.accuracy);
    });
    MultiLayerNetwork model = initialized();
    model.setListeners({std::make_shared<StatsListener>(storage), listener});
    VectorIterator train(testutil::batches(5, 4));
    model.fit(train, 2);  // iterations 1..10
    const StatsSnapshot snapshot = storage->snapshot();
    REQUIRE(snapshot.validation.size() == 3);
    for (size_t i = 0; i < snapshot.validation.size(); ++i) {
      CAPTURE(i);
      CHECK(snapshot.validation[i].iteration == listener->results()[i].iteration);
      CHECK(snapshot.validation[i].epoch == listener->results()[i].epoch);
      CHECK(snapshot.validation[i].accuracy == listener->results()[i].accuracy);
    }
    CHECK(snapshot.iterations.size() == 10);
  }

  TEST_CASE("EvaluativeListener: bad settings and an empty validation iterator") {
    VectorIterator validation(validationData());
    CHECK_THROWS_WITH_AS(EvaluativeListener(validation, 0),
                         "EvaluativeListener: frequency must be >= 1, got 0", ConfigError);
    NoResetIterator once(validationData());
    CHECK_THROWS_WITH_AS(EvaluativeListener(once, 1),
                         doctest::Contains("validation iterator cannot be reset"), ConfigError);

    MultiLayerNetwork model = initialized();
    VectorIterator empty(std::vector<DataSet>{});
    model.setListeners({std::make_shared<EvaluativeListener>(empty, 1)});
    VectorIterator train(testutil::batches(2, 4));
    CHECK_THROWS_WITH_AS(model.fit(train), doctest::Contains("validation iterator has no data"),
                         DataError);
  }
}
