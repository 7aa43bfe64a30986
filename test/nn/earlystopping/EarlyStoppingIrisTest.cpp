// Early stopping on real data: iris (python3-sklearn's CSV, read by CSVRecordReader), shuffled and
// split into training and validation examples; the validation loss decides when to stop.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <vector>

#include "TrainingSnapshots.h"
#include "iterators/SklearnData.h"
#include "nn/util/ModelFileTestUtil.h"

using namespace dl4cpp;

namespace {

// With these settings (Adam at 0.05, 75 training examples in batches of 10) the validation loss
// falls fast and then wobbles: on this build it reaches 0.071 at epoch 11 and stays above that for
// the next 10 epochs, so the run stops after 22.
constexpr int kPatience = 10;
constexpr double kMinImprovement = 0;
constexpr int kMaxEpochs = 400;

MultiLayerNetwork irisNetwork() {
  MultiLayerNetwork net(
      NeuralNetConfiguration::Builder()
          .seed(7)
          .updater(Adam(0.05))
          .list()
          .layer(DenseLayer::Builder().nIn(4).nOut(32).activation(Activation::TANH).build())
          .layer(OutputLayer::Builder(LossFunction::MCXENT)
                     .nOut(3)
                     .activation(Activation::SOFTMAX)
                     .build())
          .build(),
      Device::cpu(), 1);
  net.init();
  return net;
}

// The epoch at which ScoreImprovementEpochTerminationCondition(kPatience, kMinImprovement) should
// fire for these validation losses (every epoch evaluated), worked out here on its own; -1: never.
int expectedStop(const std::map<int, double>& scores) {
  int bestEpoch = -1;
  double best = 0;
  for (const auto& [epoch, score] : scores) {
    if (bestEpoch < 0 || best - score > kMinImprovement) {
      bestEpoch = epoch;
      best = score;
    } else if (epoch - bestEpoch >= kPatience) {
      return epoch;
    }
  }
  return -1;
}

}  // namespace

TEST_SUITE("nn/earlystopping") {
  TEST_CASE("EarlyStoppingTrainer: iris, validation loss, patience 10") {
    if (!testutil::haveSklearnData()) return;
    CSVRecordReader reader(1);
    reader.initialize(testutil::kSklearnData / "iris.csv");
    RecordReaderDataSetIterator all(reader, 150, 4, 3);
    // The table is sorted by class: shuffle before splitting.
    const DataSet::TrainTest split = all.next().shuffled(42).splitTestAndTrain(0.5);
    ListDataSetIterator train(split.train, 10);
    ListDataSetIterator validation(split.test, 30);

    MultiLayerNetwork model = irisNetwork();
    auto snapshots = std::make_shared<testutil::ParameterSnapshots>();
    model.setListeners({snapshots});
    EarlyStoppingTrainer trainer(
        EarlyStoppingConfiguration::Builder()
            .epochTerminationConditions(
                {std::make_shared<MaxEpochsTerminationCondition>(kMaxEpochs),
                 std::make_shared<ScoreImprovementEpochTerminationCondition>(kPatience,
                                                                             kMinImprovement)})
            .scoreCalculator(std::make_shared<DataSetLossCalculator>(validation))
            .build(),
        model, train);
    EarlyStoppingResult r = trainer.fit();
    MESSAGE("iris: stopped after " << r.totalEpochs << " epochs, best epoch " << r.bestModelEpoch
                                   << ", validation loss " << r.bestModelScore);

    CHECK(
        (r.terminationReason == EarlyStoppingResult::TerminationReason::EpochTerminationCondition));
    CHECK(r.terminationDetails.rfind(
              "ScoreImprovementEpochTerminationCondition: no improvement for 10 epochs", 0) == 0);
    REQUIRE(static_cast<int>(r.scoreVsEpoch.size()) == r.totalEpochs);
    CHECK(r.totalEpochs < kMaxEpochs);
    CHECK(expectedStop(r.scoreVsEpoch) == r.totalEpochs - 1);

    // The best model is the epoch with the lowest validation loss, bit for bit, and scores so.
    int best = 0;
    for (const auto& [epoch, score] : r.scoreVsEpoch)
      if (score < r.scoreVsEpoch.at(best)) best = epoch;
    CHECK(r.bestModelEpoch == best);
    CHECK(best < r.totalEpochs - 1);  // the loss rose again: the last model is not the best
    CHECK(r.bestModelScore == r.scoreVsEpoch.at(best));
    CHECK(testutil::bitIdentical(r.bestModel->params().toVector(), snapshots->atEpochEnd[best]));
    MultiLayerNetwork& bestModel = r.getBestModel();
    CHECK(DataSetLossCalculator(validation).calculateScore(bestModel) == r.bestModelScore);
    validation.reset();
    const double accuracy = bestModel.evaluate(validation).accuracy();
    MESSAGE("iris: validation accuracy of the best model " << accuracy);
    CHECK(accuracy >= 0.9);
  }
}
