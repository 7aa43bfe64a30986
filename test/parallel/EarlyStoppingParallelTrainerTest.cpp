#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <vector>

#include "ParallelTestUtil.h"
#include "TrainingSnapshots.h"
#include "nn/earlystopping/EarlyStoppingTestUtil.h"
#include "nn/util/ModelFileTestUtil.h"

using namespace dl4cpp;
using dl4cpp::parallel::EarlyStoppingParallelTrainer;
using testutil::VectorIterator;
using Reason = EarlyStoppingResult::TerminationReason;

namespace {

// 12 minibatches of 4: with 2 workers averaging every 3, an epoch is 2 rounds of 3 iterations.
std::vector<DataSet> trainData() { return testutil::batches(12, 4); }
std::vector<DataSet> validationData() { return testutil::batches(3, 10, 99); }

parallel::ParallelWrapper::Builder twoWorkers(MultiLayerNetwork& model) {
  return testutil::wrapperOnCpu(model).workers(2).averagingFrequency(3).threadsPerWorker(1);
}

}  // namespace

TEST_SUITE("parallel") {
  TEST_CASE("EarlyStoppingParallelTrainer: 2 workers, MaxEpochs, the averaged best model") {
    MultiLayerNetwork model = testutil::smallModel(Sgd(0.5));
    auto snapshots = std::make_shared<testutil::ParameterSnapshots>();
    model.setListeners({snapshots});
    VectorIterator train(trainData());
    VectorIterator validation(validationData());
    EarlyStoppingParallelTrainer trainer(
        EarlyStoppingConfiguration::Builder()
            .epochTerminationConditions({std::make_shared<MaxEpochsTerminationCondition>(4)})
            .scoreCalculator(std::make_shared<DataSetLossCalculator>(validation))
            .build(),
        model, train, twoWorkers(model));
    const EarlyStoppingResult r = trainer.fit();
    CHECK((r.terminationReason == Reason::EpochTerminationCondition));
    CHECK(r.terminationDetails == "MaxEpochsTerminationCondition: 4 epochs reached");
    CHECK(r.totalEpochs == 4);
    CHECK(model.getEpochCount() == 4);
    CHECK(model.getIterationCount() == 4 * 6);
    // The model's listener saw each averaged round (iterations 3, 6, ...) and epoch end.
    CHECK(snapshots->atIteration.size() == 8);
    REQUIRE(snapshots->atEpochEnd.size() == 4);
    // Each score is the validation loss of the averaged model at that epoch's end; the best
    // model is bit for bit the averaged model of the best epoch.
    REQUIRE(r.scoreVsEpoch.size() == 4);
    int best = 0;
    for (const auto& [epoch, score] : r.scoreVsEpoch) {
      MultiLayerNetwork m = testutil::smallModel(Sgd(0.5));
      m.setParams(Tensor::fromVector(Shape{m.numParams()}, snapshots->atEpochEnd[epoch]));
      VectorIterator check(validationData());
      CHECK(DataSetLossCalculator(check).calculateScore(m) == score);
      if (score < r.scoreVsEpoch.at(best)) best = epoch;
    }
    CHECK(r.bestModelEpoch == best);
    CHECK(testutil::bitIdentical(r.bestModel->params().toVector(), snapshots->atEpochEnd[best]));
    CHECK(trainer.wrapper().workers() == 2);
  }

  TEST_CASE("EarlyStoppingParallelTrainer: an iteration condition stops the wrapper at a round") {
    // Each clock reading 1 s later, 3 s allowed: the 3rd round stops it (epoch 1, first round).
    MultiLayerNetwork model = testutil::smallModel(Sgd(0.5));
    auto snapshots = std::make_shared<testutil::ParameterSnapshots>();
    model.setListeners({snapshots});
    VectorIterator train(trainData());
    auto saver = std::make_shared<InMemoryModelSaver>();
    EarlyStoppingParallelTrainer trainer(
        EarlyStoppingConfiguration::Builder()
            .epochTerminationConditions({std::make_shared<MaxEpochsTerminationCondition>(100)})
            .iterationTerminationConditions({std::make_shared<MaxTimeIterationTerminationCondition>(
                std::chrono::seconds(3), testutil::steppingClock(std::chrono::seconds(1)))})
            .scoreCalculator(std::make_shared<testutil::ScriptedScore>(std::vector<double>{0.5}))
            .modelSaver(saver)
            .saveLastModel(true)
            .build(),
        model, train, twoWorkers(model));
    const EarlyStoppingResult r = trainer.fit();
    CHECK((r.terminationReason == Reason::IterationTerminationCondition));
    CHECK(r.terminationDetails.rfind("MaxTimeIterationTerminationCondition", 0) == 0);
    CHECK(model.getIterationCount() == 9);
    CHECK(model.getEpochCount() == 1);  // epoch 1 was cut short
    CHECK(r.totalEpochs == 1);
    CHECK(snapshots->atIteration.size() == 3);
    CHECK(r.bestModelEpoch == 0);
    CHECK(testutil::bitIdentical(r.bestModel->params().toVector(), snapshots->atEpochEnd[0]));
    CHECK(testutil::bitIdentical(saver->getLatestModel()->params().toVector(),
                                 snapshots->atIteration[9]));
  }

  TEST_CASE("EarlyStoppingParallelTrainer: divergence stops with InvalidScore") {
    MultiLayerNetwork model = testutil::smallModel(Sgd(1e38));
    VectorIterator train(trainData());
    EarlyStoppingParallelTrainer trainer(
        EarlyStoppingConfiguration::Builder()
            .epochTerminationConditions({std::make_shared<MaxEpochsTerminationCondition>(20)})
            .iterationTerminationConditions(
                {std::make_shared<InvalidScoreIterationTerminationCondition>()})
            .scoreCalculator(
                std::make_shared<testutil::ScriptedScore>(std::vector<double>(20, 1.0)))
            .build(),
        model, train, testutil::wrapperOnCpu(model).workers(2).threadsPerWorker(1));
    const EarlyStoppingResult r = trainer.fit();
    CHECK((r.terminationReason == Reason::IterationTerminationCondition));
    CHECK_MESSAGE(r.terminationDetails.rfind("InvalidScoreIterationTerminationCondition: score is "
                                             "nan (",
                                             0) == 0,
                  r.terminationDetails);
    for (float p : model.params().toVector()) REQUIRE(std::isfinite(p));
  }

  TEST_CASE("EarlyStoppingParallelTrainer: a wrapper built for another model is a ConfigError") {
    MultiLayerNetwork model = testutil::smallModel(Sgd(0.5));
    MultiLayerNetwork other = testutil::smallModel(Sgd(0.5));
    VectorIterator train(trainData());
    EarlyStoppingParallelTrainer trainer(
        EarlyStoppingConfiguration::Builder()
            .epochTerminationConditions({std::make_shared<MaxEpochsTerminationCondition>(2)})
            .scoreCalculator(std::make_shared<testutil::ScriptedScore>(std::vector<double>{1, 1}))
            .build(),
        model, train, twoWorkers(other));
    CHECK_THROWS_WITH_AS(trainer.fit(),
                         doctest::Contains("training reports a model other than the trainer's"),
                         ConfigError);
  }
}
