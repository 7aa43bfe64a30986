#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <vector>

#include "TempDir.h"
#include "TrainingSnapshots.h"
#include "nn/earlystopping/EarlyStoppingTestUtil.h"
#include "nn/util/ModelFileTestUtil.h"

using namespace dl4cpp;
using testutil::NoResetIterator;
using testutil::VectorIterator;
using Reason = EarlyStoppingResult::TerminationReason;

namespace {

// 3 minibatches of 4 per epoch.
std::vector<DataSet> trainData() { return testutil::batches(3, 4); }

EarlyStoppingConfiguration::Builder scripted(std::shared_ptr<testutil::ScriptedScore> score,
                                             std::shared_ptr<EpochTerminationCondition> condition) {
  EarlyStoppingConfiguration::Builder b;
  b.epochTerminationConditions({std::move(condition)}).scoreCalculator(std::move(score));
  return b;
}

// Runs `conf` on a fresh small model, recording the parameters at every epoch end and iteration.
struct Run {
  MultiLayerNetwork model = testutil::smallModel(Sgd(0.1));
  std::shared_ptr<testutil::ParameterSnapshots> snapshots =
      std::make_shared<testutil::ParameterSnapshots>();
  VectorIterator train{trainData()};

  EarlyStoppingResult fit(const EarlyStoppingConfiguration& conf) {
    model.setListeners({snapshots});
    EarlyStoppingTrainer trainer(conf, model, train);
    return trainer.fit();
  }
};

// Fails on its `failAt`-th minibatch (0-based, counted over every epoch).
class FailingIterator : public VectorIterator {
 public:
  FailingIterator(std::vector<DataSet> data, int failAt)
      : VectorIterator(std::move(data)), failAt_(failAt) {}
  DataSet next() override {
    if (served() == failAt_) throw DataFormatError("FailingIterator: bad record");
    return VectorIterator::next();
  }

 private:
  int failAt_;
};

}  // namespace

TEST_SUITE("nn/earlystopping") {
  TEST_CASE("EarlyStoppingTrainer: MaxEpochs ends the run, the best epoch's model is returned") {
    auto score = std::make_shared<testutil::ScriptedScore>(std::vector<double>{0.9, 0.5, 0.7, 0.6});
    Run run;
    const EarlyStoppingResult r =
        run.fit(scripted(score, std::make_shared<MaxEpochsTerminationCondition>(4)).build());
    CHECK((r.terminationReason == Reason::EpochTerminationCondition));
    CHECK(r.terminationDetails == "MaxEpochsTerminationCondition: 4 epochs reached");
    CHECK(toString(r.terminationReason) == "EpochTerminationCondition");
    CHECK(r.totalEpochs == 4);
    CHECK(r.scoreVsEpoch == std::map<int, double>{{0, 0.9}, {1, 0.5}, {2, 0.7}, {3, 0.6}});
    CHECK(r.bestModelEpoch == 1);
    CHECK(r.bestModelScore == 0.5);
    CHECK(run.model.getEpochCount() == 4);
    // Bit for bit the parameters the model had when epoch 1 ended, not the last epoch's.
    CHECK(testutil::bitIdentical(r.bestModel->params().toVector(), run.snapshots->atEpochEnd[1]));
    CHECK_FALSE(
        testutil::bitIdentical(r.bestModel->params().toVector(), run.model.params().toVector()));
    CHECK(r.bestModel->getEpochCount() == 2);
    // The model's own listeners are its own again.
    REQUIRE(run.model.getListeners().size() == 1);
    CHECK(run.model.getListeners().front() == run.snapshots);
  }

  TEST_CASE("EarlyStoppingTrainer: ScoreImprovement stops after the patience, and says so") {
    auto score = std::make_shared<testutil::ScriptedScore>(
        std::vector<double>{1.0, 0.8, 0.9, 0.85, 0.95, 0.1});
    Run run;
    const EarlyStoppingResult r =
        run.fit(EarlyStoppingConfiguration::Builder()
                    .epochTerminationConditions(
                        {std::make_shared<MaxEpochsTerminationCondition>(10),
                         std::make_shared<ScoreImprovementEpochTerminationCondition>(3)})
                    .scoreCalculator(score)
                    .build());
    CHECK((r.terminationReason == Reason::EpochTerminationCondition));
    CHECK(r.terminationDetails ==
          "ScoreImprovementEpochTerminationCondition: no improvement for 3 epochs (best score 0.8 "
          "at epoch 1)");
    CHECK(r.totalEpochs == 5);
    CHECK(score->calls == 5);
    CHECK(r.bestModelEpoch == 1);
    CHECK(testutil::bitIdentical(r.bestModel->params().toVector(), run.snapshots->atEpochEnd[1]));
  }

  TEST_CASE("EarlyStoppingTrainer: a higher-is-better score and a target score") {
    auto score = std::make_shared<testutil::ScriptedScore>(std::vector<double>{0.6, 0.8, 0.7, 0.95},
                                                           /*minimize=*/false);
    Run run;
    const EarlyStoppingResult r =
        run.fit(scripted(score, std::make_shared<BestScoreEpochTerminationCondition>(0.9)).build());
    CHECK(
        r.terminationDetails ==
        "BestScoreEpochTerminationCondition: score 0.95 at epoch 3 is better than the target 0.9");
    CHECK(r.bestModelEpoch == 3);
    CHECK(r.bestModelScore == 0.95);
    CHECK(testutil::bitIdentical(r.bestModel->params().toVector(), run.snapshots->atEpochEnd[3]));
  }

  TEST_CASE("EarlyStoppingTrainer: evaluateEveryNEpochs, and the last epoch is always evaluated") {
    auto score = std::make_shared<testutil::ScriptedScore>(std::vector<double>{0.5, 0.6, 0.4});
    Run run;
    const EarlyStoppingResult r =
        run.fit(scripted(score, std::make_shared<MaxEpochsTerminationCondition>(5))
                    .evaluateEveryNEpochs(2)
                    .build());
    CHECK(r.scoreVsEpoch == std::map<int, double>{{1, 0.5}, {3, 0.6}, {4, 0.4}});
    CHECK(r.totalEpochs == 5);
    CHECK(r.bestModelEpoch == 4);
    CHECK(testutil::bitIdentical(r.bestModel->params().toVector(), run.model.params().toVector()));
  }

  TEST_CASE("EarlyStoppingTrainer: an iteration condition stops in the middle of an epoch") {
    // 5 s allowed, each clock reading 1 s later: the 5th iteration is the last (epoch 1, its 2nd).
    auto score = std::make_shared<testutil::ScriptedScore>(std::vector<double>{0.5});
    auto saver = std::make_shared<InMemoryModelSaver>();
    Run run;
    const EarlyStoppingResult r = run.fit(
        scripted(score, std::make_shared<MaxEpochsTerminationCondition>(100))
            .iterationTerminationConditions({std::make_shared<MaxTimeIterationTerminationCondition>(
                std::chrono::seconds(5), testutil::steppingClock(std::chrono::seconds(1)))})
            .modelSaver(saver)
            .saveLastModel(true)
            .build());
    CHECK((r.terminationReason == Reason::IterationTerminationCondition));
    CHECK(r.terminationDetails ==
          "MaxTimeIterationTerminationCondition: 5.000 s elapsed, the limit is 5.000 s");
    CHECK(run.model.getIterationCount() == 5);
    CHECK(run.train.served() == 5);
    CHECK(r.totalEpochs == 1);
    CHECK(r.scoreVsEpoch == std::map<int, double>{{0, 0.5}});
    CHECK(r.bestModelEpoch == 0);
    CHECK(testutil::bitIdentical(r.bestModel->params().toVector(), run.snapshots->atEpochEnd[0]));
    // saveLastModel: the latest is the model where training stopped.
    const auto latest = saver->getLatestModel();
    REQUIRE(latest);
    CHECK(testutil::bitIdentical(latest->params().toVector(), run.snapshots->atIteration[5]));
    CHECK(run.model.getListeners().size() == 1);
  }

  TEST_CASE("EarlyStoppingTrainer: stopped before any evaluation, the model as training left it") {
    auto score = std::make_shared<testutil::ScriptedScore>(std::vector<double>{});
    testutil::TempDir dir;
    // A best model of some earlier run in the saver's directory is not this run's best.
    MultiLayerNetwork other = testutil::smallModel(Sgd(0.5));
    other.save(dir / LocalFileModelSaver::kBestModelFile);
    Run run;
    const EarlyStoppingResult r = run.fit(
        scripted(score, std::make_shared<MaxEpochsTerminationCondition>(3))
            .iterationTerminationConditions({std::make_shared<MaxTimeIterationTerminationCondition>(
                std::chrono::seconds(2), testutil::steppingClock(std::chrono::seconds(1)))})
            .modelSaver(std::make_shared<LocalFileModelSaver>(dir.path()))
            .build());
    CHECK((r.terminationReason == Reason::IterationTerminationCondition));
    CHECK(r.totalEpochs == 0);
    CHECK(r.scoreVsEpoch.empty());
    CHECK(r.bestModelEpoch == -1);
    CHECK(std::isnan(r.bestModelScore));
    CHECK(testutil::bitIdentical(r.bestModel->params().toVector(), run.model.params().toVector()));
    CHECK(r.bestModel->getIterationCount() == 2);
  }

  TEST_CASE("EarlyStoppingTrainer: a diverging run stops with InvalidScore, the model unharmed") {
    // A learning rate of 1e38 drives the parameters past the float range within a few steps. The
    // model refuses the step that would have made it non-finite (NumericalError), and the run ends
    // there.
    auto makeConf = [](bool withInvalidScore) {
      auto b = EarlyStoppingConfiguration::Builder();
      b.epochTerminationConditions({std::make_shared<MaxEpochsTerminationCondition>(50)})
          .scoreCalculator(std::make_shared<testutil::ScriptedScore>(std::vector<double>(50, 1.0)));
      if (withInvalidScore)
        b.iterationTerminationConditions(
            {std::make_shared<MaxScoreIterationTerminationCondition>(1e300),
             std::make_shared<InvalidScoreIterationTerminationCondition>()});
      return b.build();
    };
    MultiLayerNetwork model = testutil::smallModel(Sgd(1e38));
    VectorIterator train(trainData());
    EarlyStoppingTrainer trainer(makeConf(true), model, train);
    const EarlyStoppingResult r = trainer.fit();
    CHECK((r.terminationReason == Reason::IterationTerminationCondition));
    CHECK_MESSAGE(r.terminationDetails.rfind("InvalidScoreIterationTerminationCondition: score is "
                                             "nan (MultiLayerNetwork::fit: ",
                                             0) == 0,
                  r.terminationDetails);
    for (float p : model.params().toVector()) REQUIRE(std::isfinite(p));

    // Without a condition that takes it, the NumericalError is the caller's.
    MultiLayerNetwork again = testutil::smallModel(Sgd(1e38));
    VectorIterator trainAgain(trainData());
    EarlyStoppingTrainer plain(makeConf(false), again, trainAgain);
    CHECK_THROWS_AS(plain.fit(), NumericalError);
  }

  TEST_CASE("EarlyStoppingTrainer: errors propagate, the saver keeps the best so far") {
    auto saver = std::make_shared<InMemoryModelSaver>();
    MultiLayerNetwork model = testutil::smallModel(Sgd(0.1));
    auto snapshots = std::make_shared<testutil::ParameterSnapshots>();
    model.setListeners({snapshots});
    FailingIterator train(trainData(), 7);  // epoch 2, its 2nd minibatch
    EarlyStoppingTrainer trainer(
        scripted(std::make_shared<testutil::ScriptedScore>(std::vector<double>{0.5, 0.7}),
                 std::make_shared<MaxEpochsTerminationCondition>(5))
            .modelSaver(saver)
            .build(),
        model, train);
    CHECK_THROWS_WITH_AS(trainer.fit(), "FailingIterator: bad record", DataFormatError);
    const auto best = saver->getBestModel();
    REQUIRE(best);
    CHECK(testutil::bitIdentical(best->params().toVector(), snapshots->atEpochEnd[0]));
    CHECK(model.getListeners().size() == 1);

    // A training iterator that cannot be reset serves one epoch only.
    MultiLayerNetwork once = testutil::smallModel(Sgd(0.1));
    NoResetIterator oneEpoch(trainData());
    EarlyStoppingTrainer twoEpochs(
        scripted(std::make_shared<testutil::ScriptedScore>(std::vector<double>{0.5}),
                 std::make_shared<MaxEpochsTerminationCondition>(2))
            .build(),
        once, oneEpoch);
    CHECK_THROWS_WITH_AS(twoEpochs.fit(),
                         "EarlyStoppingTrainer: the training iterator cannot be reset, so it "
                         "cannot serve more than one epoch",
                         DataError);
  }

  TEST_CASE("EarlyStoppingTrainer: a second fit() starts the conditions afresh") {
    auto score = std::make_shared<testutil::ScriptedScore>(std::vector<double>{1, 2, 3, 2});
    Run run;
    EarlyStoppingTrainer trainer(
        EarlyStoppingConfiguration::Builder()
            .epochTerminationConditions(
                {std::make_shared<ScoreImprovementEpochTerminationCondition>(1),
                 std::make_shared<MaxEpochsTerminationCondition>(2)})
            .scoreCalculator(score)
            .build(),
        run.model, run.train);
    CHECK(trainer.fit().terminationDetails ==
          "ScoreImprovementEpochTerminationCondition: no improvement for 1 epoch (best score 1 at "
          "epoch 0)");
    // Scores 3, 2: an improvement, so MaxEpochs ends it. Had the condition kept the first run's
    // best (1 at epoch 0), it would have fired again.
    const EarlyStoppingResult second = trainer.fit();
    CHECK(second.terminationDetails == "MaxEpochsTerminationCondition: 2 epochs reached");
    CHECK(second.scoreVsEpoch == std::map<int, double>{{0, 3}, {1, 2}});
    CHECK(second.bestModelEpoch == 1);
  }
}
