// Early stopping on a ComputationGraph: EarlyStoppingTrainer and EarlyStoppingParallelTrainer take
// a graph as they take a network (through Model). A chain graph, which trains to the network's
// bits, gives the network's run exactly: scores, best epoch and best model; the savers and the
// score calculators keep and score graphs, and the best model comes back as a graph.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "TempDir.h"
#include "parallel/ParallelTestUtil.h"

using namespace dl4cpp;
using testutil::VectorIterator;

namespace {

// testutil::smallNet as a graph: dense 6 -> 10 (tanh) -> 3 (softmax), same seed and updater.
ComputationGraphConfiguration smallGraph() {
  return NeuralNetConfiguration::Builder()
      .seed(12)
      .updater(Sgd(0.5))
      .graphBuilder()
      .addInputs("in")
      .setInputTypes(InputType::feedForward(6))
      .addLayer("dense", DenseLayer::Builder().nOut(10).activation(Activation::TANH).build(), "in")
      .addLayer("out",
                OutputLayer::Builder(LossFunction::MCXENT)
                    .nOut(3)
                    .activation(Activation::SOFTMAX)
                    .build(),
                "dense")
      .setOutputs("out")
      .build();
}

std::vector<DataSet> trainData() { return testutil::batches(12, 4); }
std::vector<DataSet> validationData() { return testutil::batches(3, 10, 99); }

EarlyStoppingConfiguration configuration(DataSetIterator& validation,
                                         std::shared_ptr<EarlyStoppingModelSaver> saver) {
  return EarlyStoppingConfiguration::Builder()
      .epochTerminationConditions({std::make_shared<MaxEpochsTerminationCondition>(4)})
      .scoreCalculator(std::make_shared<DataSetLossCalculator>(validation))
      .modelSaver(std::move(saver))
      .build();
}

void checkSameRun(const EarlyStoppingResult& graph, const EarlyStoppingResult& network) {
  CHECK(graph.totalEpochs == network.totalEpochs);
  CHECK(graph.scoreVsEpoch == network.scoreVsEpoch);
  CHECK(graph.bestModelEpoch == network.bestModelEpoch);
  CHECK(graph.bestModelScore == network.bestModelScore);
  CHECK(graph.getBestModel<ComputationGraph>().params().toVector() ==
        network.getBestModel().params().toVector());
}

}  // namespace

TEST_SUITE("nn/earlystopping") {
  TEST_CASE("EarlyStoppingTrainer on a graph: the chain graph's run is the network's") {
    MultiLayerNetwork network(testutil::smallNet(Sgd(0.5)));
    network.init();
    ComputationGraph graph(smallGraph());
    graph.init();
    REQUIRE(graph.params().toVector() == network.params().toVector());

    VectorIterator trainN(trainData()), validationN(validationData());
    const EarlyStoppingResult fromNetwork =
        EarlyStoppingTrainer(configuration(validationN, std::make_shared<InMemoryModelSaver>()),
                             network, trainN)
            .fit();
    testutil::TempDir dir;
    auto saver = std::make_shared<LocalFileModelSaver>(dir / "models");
    VectorIterator trainG(trainData()), validationG(validationData());
    const EarlyStoppingResult fromGraph =
        EarlyStoppingTrainer(configuration(validationG, saver), graph, trainG).fit();

    CHECK(fromGraph.totalEpochs == 4);
    CHECK(graph.getEpochCount() == 4);
    CHECK(network.getEpochCount() == 4);
    checkSameRun(fromGraph, fromNetwork);
    // The file saver wrote a graph's model file and loads it back as a graph.
    CHECK(ComputationGraph::load(saver->bestModelPath()).params().toVector() ==
          fromGraph.getBestModel<ComputationGraph>().params().toVector());
    CHECK(dynamic_cast<ComputationGraph*>(saver->getBestModel().get()) != nullptr);
    CHECK_THROWS_AS((void)fromGraph.getBestModel<MultiLayerNetwork>(), ConfigError);
    CHECK_THROWS_AS((void)fromNetwork.getBestModel<ComputationGraph>(), ConfigError);
  }

  TEST_CASE("EarlyStoppingParallelTrainer on a graph: 2 workers, the network's run") {
    auto run = [](Model& model) {
      VectorIterator train(trainData()), validation(validationData());
      parallel::EarlyStoppingParallelTrainer trainer(
          configuration(validation, std::make_shared<InMemoryModelSaver>()), model, train,
          testutil::wrapperOnCpu(model).workers(2).averagingFrequency(3).threadsPerWorker(1));
      return trainer.fit();
    };
    MultiLayerNetwork network(testutil::smallNet(Sgd(0.5)));
    network.init();
    ComputationGraph graph(smallGraph());
    graph.init();
    const EarlyStoppingResult fromNetwork = run(network);
    const EarlyStoppingResult fromGraph = run(graph);
    CHECK(graph.getIterationCount() == 4 * 6);
    checkSameRun(fromGraph, fromNetwork);
  }

  TEST_CASE("Score calculators score graphs") {
    ComputationGraph graph(smallGraph());
    graph.init();
    VectorIterator validation(validationData());
    double loss = 0;
    int64_t examples = 0;
    for (const DataSet& d : validationData()) {
      loss += graph.score(d) * static_cast<double>(d.numExamples());
      examples += d.numExamples();
    }
    CHECK(DataSetLossCalculator(validation).calculateScore(graph) ==
          doctest::Approx(loss / static_cast<double>(examples)).epsilon(1e-12));
    VectorIterator again(validationData());
    CHECK(ClassificationScoreCalculator(ClassificationScoreCalculator::Metric::ACCURACY, again)
              .calculateScore(graph) == graph.evaluate(validation).accuracy());
  }
}
