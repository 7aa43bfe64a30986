#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <vector>

#include "nn/earlystopping/EarlyStoppingTestUtil.h"
#include "nn/util/ModelFileTestUtil.h"

using namespace dl4cpp;
using testutil::NoResetIterator;
using testutil::VectorIterator;

namespace {

// 3 batches: 10, 10 and 5 examples, so a mean over batches would differ from one over examples.
std::vector<DataSet> validationData() { return testutil::batches(3, 10, 99, 5); }

MultiLayerNetwork trainedModel() {
  MultiLayerNetwork m(testutil::smallNet(Sgd(0.3), 1e-2), Device::cpu(), 1);
  m.init();
  VectorIterator train(testutil::batches(6, 8));
  m.fit(train, 3);
  return m;
}

}  // namespace

TEST_SUITE("nn/earlystopping") {
  TEST_CASE("DataSetLossCalculator: the loss over all validation examples, the model untouched") {
    MultiLayerNetwork model = trainedModel();
    const auto params = model.params().toVector();
    const double trainingScore = model.score();
    double sum = 0;
    for (const DataSet& b : validationData())
      sum += model.score(b) * static_cast<double>(b.numExamples());
    const double expected = sum / 25;

    VectorIterator validation(validationData());
    validation.next();  // wherever it was left, a calculation reads all of it
    DataSetLossCalculator calculator(validation);
    CHECK(calculator.minimizeScore());
    CHECK(calculator.calculateScore(model) == doctest::Approx(expected).epsilon(1e-12));
    CHECK(calculator.calculateScore(model) == doctest::Approx(expected).epsilon(1e-12));
    CHECK(testutil::bitIdentical(model.params().toVector(), params));
    CHECK(model.score() == trainingScore);
  }

  TEST_CASE("ClassificationScoreCalculator: the metrics of MultiLayerNetwork::evaluate") {
    MultiLayerNetwork model = trainedModel();
    VectorIterator all(validationData());
    const Evaluation eval = model.evaluate(all);
    REQUIRE(eval.getNumRowCounter() == 25);
    using Metric = ClassificationScoreCalculator::Metric;
    const std::vector<std::pair<Metric, double>> expected = {{Metric::ACCURACY, eval.accuracy()},
                                                             {Metric::F1, eval.f1()},
                                                             {Metric::PRECISION, eval.precision()},
                                                             {Metric::RECALL, eval.recall()}};
    for (const auto& [metric, value] : expected) {
      CAPTURE(static_cast<int>(metric));
      VectorIterator validation(validationData());
      validation.next();
      ClassificationScoreCalculator calculator(metric, validation);
      CHECK_FALSE(calculator.minimizeScore());
      CHECK(calculator.calculateScore(model) == value);
    }
  }

  TEST_CASE("Score calculators: a validation iterator that cannot be reset or holds nothing") {
    NoResetIterator once(validationData());
    CHECK_THROWS_WITH_AS(DataSetLossCalculator{once},
                         "DataSetLossCalculator: the validation iterator cannot be reset, so it "
                         "cannot be evaluated more than once",
                         ConfigError);
    CHECK_THROWS_WITH_AS(
        ClassificationScoreCalculator(ClassificationScoreCalculator::Metric::F1, once),
        doctest::Contains("ClassificationScoreCalculator: the validation iterator cannot be reset"),
        ConfigError);

    MultiLayerNetwork model = trainedModel();
    VectorIterator empty(std::vector<DataSet>{});
    DataSetLossCalculator loss(empty);
    CHECK_THROWS_WITH_AS(loss.calculateScore(model),
                         "DataSetLossCalculator: the validation iterator has no data: it yields "
                         "no minibatch",
                         DataError);
    ClassificationScoreCalculator accuracy(ClassificationScoreCalculator::Metric::ACCURACY, empty);
    CHECK_THROWS_AS(accuracy.calculateScore(model), DataError);
  }
}
