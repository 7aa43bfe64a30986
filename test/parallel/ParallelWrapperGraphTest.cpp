// ParallelWrapper, ParallelInference and listeners with a ComputationGraph, through the Model
// interface (nn/api/Model.h): one worker equals plain fit, N workers with SGD equal one graph on
// the concatenated minibatch, runs repeat bit for bit, a residual graph with batch norm trains and
// combines its layer state, and checkpoints resume to the uninterrupted run's bits.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <sstream>

#include "TempDir.h"
#include "parallel/ClusterTestUtil.h"
#include "parallel/ParallelTestUtil.h"

using namespace dl4cpp;
using namespace dl4cpp::parallel;
using testutil::bitIdentical;
using testutil::TempDir;
using testutil::VectorIterator;

namespace {

// 6 inputs -> dense 10 (tanh) -> {dense 10 (tanh), identity} -> add -> softmax 3: a fan-out and a
// residual add, on the same data as the network tests (testutil::batches).
ComputationGraphConfiguration residualGraph(const UpdaterParams& updater, bool batchNorm = false) {
  auto b = NeuralNetConfiguration::Builder().seed(12).updater(updater).graphBuilder();
  b.addInputs("in").setInputTypes(InputType::feedForward(6));
  b.addLayer("d1", DenseLayer::Builder().nOut(10).activation(Activation::TANH).build(), "in");
  std::string branch = "d1";
  if (batchNorm) {
    b.addLayer("bn", BatchNormalization::Builder().activation(Activation::IDENTITY).build(), "d1");
    branch = "bn";
  }
  b.addLayer("d2", DenseLayer::Builder().nOut(10).activation(Activation::TANH).build(), branch)
      .addVertex("add", ElementWiseVertex(ElementWiseVertex::Op::Add), "d1", "d2")
      .addLayer("out",
                OutputLayer::Builder(LossFunction::MCXENT)
                    .nOut(3)
                    .activation(Activation::SOFTMAX)
                    .build(),
                "add")
      .setOutputs("out");
  return b.build();
}

ComputationGraph initialized(const ComputationGraphConfiguration& conf) {
  ComputationGraph g(conf, Device::cpu(), 1);
  g.init();
  return g;
}

struct Recorder : TrainingListener {
  int epochStarts = 0, epochEnds = 0;
  std::vector<int64_t> iterations;
  std::vector<std::string> modelKinds;
  int64_t throwAt = -1;
  void onEpochStart(const Model&, int) override { ++epochStarts; }
  void onEpochEnd(const Model&, int) override { ++epochEnds; }
  void iterationDone(const Model& model, const IterationInfo& info) override {
    iterations.push_back(info.iteration);
    modelKinds.push_back(dynamic_cast<const ComputationGraph*>(&model) ? "graph" : "other");
    if (throwAt >= 0 && info.iteration >= throwAt) throw std::runtime_error("simulated crash");
  }
};

}  // namespace

TEST_SUITE("parallel.graph") {
  TEST_CASE("ParallelWrapper(graph): 1 worker gives exactly the parameters of plain fit") {
    const auto conf = residualGraph(Nesterovs(0.1, 0.9));
    const auto data = testutil::batches(10, 8);
    ComputationGraph plain = initialized(conf);
    VectorIterator plainData(data);
    plain.fit(plainData);

    ComputationGraph root = initialized(conf);
    auto wrapper = testutil::wrapperOnCpu(root)
                       .workers(1)
                       .threadsPerWorker(1)
                       .averagingFrequency(3)
                       .prefetchBuffer(4)
                       .build();
    VectorIterator wrapped(data);
    wrapper.fit(wrapped);
    CHECK(bitIdentical(root.params(), plain.params()));
    CHECK(bitIdentical(root.updaterState(), plain.updaterState()));
    CHECK(root.getIterationCount() == 10);
    CHECK(root.getEpochCount() == 1);
  }

  TEST_CASE("ParallelWrapper(graph): N workers with SGD equal one graph on the joined minibatch") {
    const auto conf = residualGraph(Sgd(0.1));
    const auto data = testutil::batches(12, 4);
    for (TrainingMode mode : {TrainingMode::AVERAGING, TrainingMode::SHARED_GRADIENTS}) {
      for (int workers : {2, 3}) {
        CAPTURE(static_cast<int>(mode));
        CAPTURE(workers);
        ComputationGraph reference = initialized(conf);
        for (size_t i = 0; i < data.size(); i += static_cast<size_t>(workers))
          reference.fit(DataSet::merge(std::vector<DataSet>(
              data.begin() + static_cast<long>(i),
              data.begin() + static_cast<long>(i + static_cast<size_t>(workers)))));

        ComputationGraph root = initialized(conf);
        auto wrapper = testutil::wrapperOnCpu(root)
                           .workers(workers)
                           .threadsPerWorker(1)
                           .averagingFrequency(1)
                           .trainingMode(mode)
                           .build();
        VectorIterator it(data);
        wrapper.fit(it);
        const auto a = root.params().toVector(), b = reference.params().toVector();
        REQUIRE(a.size() == b.size());
        double worst = 0;
        for (size_t i = 0; i < a.size(); ++i)
          worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]));
        CHECK(worst < 1e-5);
        CHECK(root.getIterationCount() == reference.getIterationCount());
        // Not trivially equal: training moved the parameters.
        CHECK_FALSE(bitIdentical(root.params(), initialized(conf).params()));
      }
    }
  }

  TEST_CASE("ParallelWrapper(graph): two runs with the same seed are bit-identical") {
    const auto conf = residualGraph(Adam(0.01));
    const auto data = testutil::batches(14, 4, 5, 3);
    auto run = [&] {
      ComputationGraph root = initialized(conf);
      auto wrapper =
          testutil::wrapperOnCpu(root).workers(2).threadsPerWorker(1).averagingFrequency(2).build();
      VectorIterator it(data);
      wrapper.fit(it, 2);
      return root.params().clone();
    };
    const Tensor first = run();
    CHECK(bitIdentical(first, run()));
  }

  TEST_CASE("ParallelWrapper(graph): a residual graph with batch norm trains, state is combined") {
    const auto conf = residualGraph(Adam(0.01), true);
    const auto data = testutil::batches(16, 8);
    ComputationGraph root = initialized(conf);
    REQUIRE(root.layerState().numel() > 0);
    const Tensor initialState = root.layerState().clone();
    VectorIterator all(data);
    double before = 0;
    for (const DataSet& d : data) before += root.score(d);
    auto recorder = std::make_shared<Recorder>();
    for (TrainingMode mode : {TrainingMode::AVERAGING, TrainingMode::SHARED_GRADIENTS}) {
      CAPTURE(static_cast<int>(mode));
      auto wrapper = testutil::wrapperOnCpu(root)
                         .workers(2)
                         .threadsPerWorker(1)
                         .averagingFrequency(2)
                         .trainingMode(mode)
                         .setListeners({recorder})
                         .build();
      wrapper.fit(all, 3);
    }
    double after = 0;
    for (const DataSet& d : data) after += root.score(d);
    CHECK(after < 0.95 * before);  // random labels: learnt by memorising, slowly
    // The running statistics moved from their initial values (combined from the replicas).
    CHECK_FALSE(bitIdentical(root.layerState(), initialState));
    for (float v : root.layerState().toVector()) CHECK(std::isfinite(v));
    // Listeners hear of the graph itself, once per round, with epochs around.
    REQUIRE_FALSE(recorder->iterations.empty());
    CHECK(recorder->modelKinds.front() == "graph");
    CHECK(recorder->epochStarts == 6);
    CHECK(recorder->epochEnds == 6);
  }

  TEST_CASE("ParallelWrapper(graph): resuming from the last checkpoint ends bit-identical") {
    const auto conf = residualGraph(Nesterovs(0.1, 0.9), true);
    const auto data = testutil::batches(14, 4, 5, 3);
    const int epochs = 3;
    auto builder = [&](ComputationGraph& model) {
      return testutil::wrapperOnCpu(model)
          .workers(2)
          .averagingFrequency(2)
          .threadsPerWorker(1)
          .prefetchBuffer(3);
    };
    ComputationGraph uninterrupted = initialized(conf);
    {
      testutil::ShufflingIterator it(data, 11);
      builder(uninterrupted).build().fit(it, epochs);
    }
    TempDir dir;
    {
      ComputationGraph crashed = initialized(conf);
      auto recorder = std::make_shared<Recorder>();
      recorder->throwAt = 7 + 6;  // 7 rounds of 2 iterations per epoch: mid-epoch 1
      auto wrapper = builder(crashed)
                         .checkpointEvery(Checkpoint::iterations(4), dir.path(), 2)
                         .setListeners({recorder})
                         .build();
      testutil::ShufflingIterator it(data, 11);
      CHECK_THROWS_WITH(wrapper.fit(it, epochs), "simulated crash");
    }
    const auto latest = Checkpoints::latest(dir.path());
    REQUIRE(latest.has_value());
    ComputationGraph resumed = ComputationGraph::load(*latest);
    CHECK(resumed.getEpochCount() == 1);
    CHECK(resumed.getMinibatchesInEpoch() > 0);
    testutil::ShufflingIterator fresh(data, 11);
    builder(resumed).build().resume(fresh, epochs);
    CHECK(resumed.getEpochCount() == epochs);
    CHECK(resumed.getIterationCount() == uninterrupted.getIterationCount());
    CHECK(bitIdentical(resumed.params(), uninterrupted.params()));
    CHECK(bitIdentical(resumed.updaterState(), uninterrupted.updaterState()));
    CHECK(bitIdentical(resumed.layerState(), uninterrupted.layerState()));
  }

  TEST_CASE("ParallelWrapper(graph): an outer updater and the builder's checks take graphs too") {
    const auto conf = residualGraph(Sgd(0.1));
    const auto data = testutil::batches(8, 4);
    // Sgd(1.0) as the outer updater is plain averaging up to float rounding (RoundCombine.h).
    ComputationGraph plain = initialized(conf), outer = initialized(conf);
    {
      VectorIterator it(data);
      testutil::wrapperOnCpu(plain)
          .workers(2)
          .threadsPerWorker(1)
          .averagingFrequency(2)
          .build()
          .fit(it);
    }
    {
      VectorIterator it(data);
      testutil::wrapperOnCpu(outer)
          .workers(2)
          .threadsPerWorker(1)
          .averagingFrequency(2)
          .outerUpdater(Sgd(1.0))
          .build()
          .fit(it);
    }
    const auto a = plain.params().toVector(), b = outer.params().toVector();
    for (size_t i = 0; i < a.size(); ++i) CHECK(std::fabs(a[i] - b[i]) < 1e-5);

    ComputationGraph uninitialised(conf);
    CHECK_THROWS_AS(testutil::wrapperOnCpu(uninitialised).build(), ConfigError);
  }

  TEST_CASE("ParallelWrapper(graph) on a cluster: 2 ranks x 1 worker equal 1 process x 2 workers") {
    testutil::withinSeconds(120, [] {
      const auto conf = residualGraph(Adam(0.01), true);
      const auto data = testutil::batches(11, 8, 5, 3);
      ComputationGraph alone = initialized(conf);
      {
        VectorIterator it(data);
        testutil::wrapperOnCpu(alone)
            .workers(2)
            .threadsPerWorker(1)
            .averagingFrequency(3)
            .build()
            .fit(it, 2);
      }
      std::vector<std::vector<float>> params(2), states(2);
      const auto failures = testutil::runRanks(2, [&](int rank, std::shared_ptr<Cluster> cluster) {
        ComputationGraphConfiguration own = conf;
        own.seed += static_cast<uint64_t>(rank);  // rank 0's model must replace it
        ComputationGraph root = initialized(own);
        auto wrapper = testutil::wrapperOnCpu(root)
                           .workers(1)
                           .threadsPerWorker(1)
                           .averagingFrequency(3)
                           .cluster(std::move(cluster))
                           .build();
        VectorIterator it(data);
        wrapper.fit(it, 2);
        params[static_cast<size_t>(rank)] = root.params().toVector();
        states[static_cast<size_t>(rank)] = root.layerState().toVector();
      });
      for (const auto& f : failures) REQUIRE(testutil::messageOf(f) == "");
      for (int rank = 0; rank < 2; ++rank) {
        CAPTURE(rank);
        CHECK(params[static_cast<size_t>(rank)] == alone.params().toVector());
        CHECK(states[static_cast<size_t>(rank)] == alone.layerState().toVector());
      }
    });
  }

  TEST_CASE("ParallelInference(graph): serves the graph's outputs, and takes a new graph") {
    const auto conf = residualGraph(Adam(0.01));
    ComputationGraph graph = initialized(conf);
    const auto data = testutil::batches(4, 5);
    auto inference = testutil::inferenceOnCpu(graph).workers(2).build();
    for (const DataSet& d : data)
      CHECK(bitIdentical(inference.output(d.features), graph.outputSingle(d.features)));
    VectorIterator it(data);
    graph.fit(it);
    inference.updateModel(graph);
    // Workers take the new model when they are next idle; a few requests reach both.
    for (int round = 0; round < 3; ++round)
      for (const DataSet& d : data) {
        const Tensor served = inference.output(d.features);
        CHECK(served.numel() == d.features.shape()[0] * 3);
      }
    const auto s = inference.statistics();
    CHECK(s.modelUpdates == 1);

    // Two inputs: not servable.
    auto b = NeuralNetConfiguration::Builder().seed(1).graphBuilder();
    b.addInputs("a", "b")
        .setInputTypes(InputType::feedForward(2), InputType::feedForward(2))
        .addVertex("m", MergeVertex(), "a", "b")
        .addLayer("out",
                  OutputLayer::Builder(LossFunction::MSE)
                      .nOut(1)
                      .activation(Activation::IDENTITY)
                      .build(),
                  "m")
        .setOutputs("out");
    ComputationGraph twoInputs(b.build());
    twoInputs.init();
    CHECK_THROWS_AS(testutil::inferenceOnCpu(twoInputs).build(), ConfigError);
  }
}

TEST_SUITE("listeners.graph") {
  TEST_CASE("Listeners on a graph: epochs, iterations and StatsListener's layers") {
    const auto conf = residualGraph(Adam(0.01));
    ComputationGraph graph = initialized(conf);
    auto recorder = std::make_shared<Recorder>();
    std::ostringstream printed;
    auto storage = std::make_shared<StatsStorage>();
    auto stats = std::make_shared<StatsListener>(storage, 2);
    graph.setListeners({recorder, std::make_shared<ScoreIterationListener>(2, printed), stats});
    VectorIterator it(testutil::batches(6, 4));
    graph.fit(it, 2);
    CHECK(recorder->epochStarts == 2);
    CHECK(recorder->epochEnds == 2);
    CHECK(recorder->iterations == std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    CHECK(recorder->modelKinds.back() == "graph");
    CHECK(printed.str().find("Score at iteration 12 is") != std::string::npos);
    const StatsSnapshot snapshot = storage->snapshot();
    CHECK(snapshot.layerNames == std::vector<std::string>{"d1", "d2", "out"});
    REQUIRE(snapshot.iterations.size() == 12);
    CHECK(snapshot.iterations.back().learningRates.size() == 3);
    REQUIRE_FALSE(snapshot.updateRatios.empty());
    CHECK(snapshot.updateRatios.back().ratios.size() == 3);
    for (double r : snapshot.updateRatios.back().ratios) CHECK(r > 0);
    graph.fit(DataSet(testutil::batches(1, 4).front()));
    CHECK(recorder->iterations.back() == 13);
  }
}
