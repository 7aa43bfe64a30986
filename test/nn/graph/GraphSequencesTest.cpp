// ComputationGraph on sequences: a chain of an LSTM and an RnnOutputLayer trains to
// MultiLayerNetwork's bits with masks, gradient checks on recurrent graphs with fan-out, residual
// add, merge, subset and two outputs (failing on a corrupted vertex), masks that hide the padding,
// activation memory planned per sequence length, and typed errors for what does not fit.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <vector>

#include "nn/graph/GraphTestData.h"
#include "nn/layers/SequenceTestUtil.h"

using namespace dl4cpp;
using testutil::perStepSoftmax;

namespace {

// n sequences of `steps` (features 3, 3 classes per step) where example 1 is 2 steps shorter,
// its padding filled with 7.0 (which changes every result unless the masks hide it).
MultiDataSet paddedSequences(int64_t n, int64_t steps, uint64_t seed) {
  DataSet d = testutil::randomSequences(n, 3, steps, 3, seed);
  Tensor mask(Shape{n, steps});
  mask.fill(1);
  for (int64_t s = steps - 2; s < steps; ++s) {
    mask.data()[steps + s] = 0;
    for (int64_t k = 0; k < 3; ++k) d.features.data()[(3 + k) * steps + s] = 7.0f;
  }
  return MultiDataSet({d.features}, {d.labels}, {mask}, {mask.clone()});
}

DataSet asDataSet(const MultiDataSet& m) {
  return DataSet(m.features[0], m.labels[0], m.featuresMask(0), m.labelsMask(0));
}

// Two stacked LSTMs, their sum (a residual add through `onBranch`), a subset of it merged back,
// a per-step softmax, and a second output on the last step of each sequence.
ComputationGraphConfiguration recurrentGraph(const GraphVertex& onBranch) {
  return NeuralNetConfiguration::Builder()
      .seed(21)
      .graphBuilder()
      .addInputs("in")
      .setInputTypes(InputType::recurrent(3))
      .addLayer("lstm1", LSTM::Builder().nOut(4).build(), "in")
      .addLayer("lstm2", LSTM::Builder().nOut(4).build(), "lstm1")
      .addVertex("branch", onBranch, "lstm2")
      .addVertex("add", ElementWiseVertex(ElementWiseVertex::Op::Add), "lstm1", "branch")
      .addVertex("sub", SubsetVertex(1, 2), "add")
      .addVertex("merge", MergeVertex(), "add", "sub")
      .addLayer("steps", perStepSoftmax(3), "merge")
      .addLayer("last", LastTimeStep(SimpleRnn::Builder().nOut(3).build()), "lstm1")
      .addLayer("final",
                OutputLayer::Builder(LossFunction::MCXENT)
                    .nOut(2)
                    .activation(Activation::SOFTMAX)
                    .build(),
                "last")
      .setOutputs("steps", "final")
      .build();
}

}  // namespace

TEST_SUITE("nn/graph") {
  TEST_CASE("ComputationGraph: an LSTM chain trains to MultiLayerNetwork's bits, masks too") {
    auto builder = [] { return NeuralNetConfiguration::Builder().seed(4).updater(Adam(1e-2)); };
    const auto lstm = LSTM::Builder().nOut(5).build();
    MultiLayerNetwork chain(builder()
                                .list()
                                .layer(lstm)
                                .layer(perStepSoftmax(3))
                                .setInputType(InputType::recurrent(3))
                                .build());
    ComputationGraph graph(builder()
                               .graphBuilder()
                               .addInputs("in")
                               .setInputTypes(InputType::recurrent(3))
                               .addLayer("lstm", lstm, "in")
                               .addLayer("out", perStepSoftmax(3), "lstm")
                               .setOutputs("out")
                               .build());
    chain.init();
    graph.init();
    REQUIRE(graph.params().toVector() == chain.params().toVector());
    for (int step = 0; step < 4; ++step) {
      // Lengths change from batch to batch: the graph plans its memory again each time.
      const MultiDataSet batch = paddedSequences(3, 5 + step, 30 + static_cast<uint64_t>(step));
      chain.fit(asDataSet(batch));
      graph.fit(batch);
      CHECK(graph.score() == chain.score());
    }
    CHECK(graph.params().toVector() == chain.params().toVector());
    const MultiDataSet probe = paddedSequences(3, 6, 99);
    CHECK(graph.outputSingle(probe.features[0], false, probe.featuresMask(0)).toVector() ==
          chain.output(probe.features[0], false, probe.featuresMask(0)).toVector());
    CHECK(graph.score(probe) == chain.score(asDataSet(probe)));

    // Evaluation counts each real step once, as the network's.
    ListDataSetIterator chainData(asDataSet(probe), 3);
    ListMultiDataSetIterator graphData({probe});
    const Evaluation expected = chain.evaluate(chainData);
    const Evaluation got = graph.evaluate(graphData).front();
    CHECK(got.getNumRowCounter() == 3 * 6 - 2);
    CHECK(got.getNumRowCounter() == expected.getNumRowCounter());
    CHECK(got.accuracy() == expected.accuracy());
  }

  TEST_CASE("ComputationGraph: masks hide the padding of sequences in a graph") {
    ComputationGraph net(recurrentGraph(ScaleVertex(0.5)));
    net.init();
    MultiDataSet batch = paddedSequences(2, 6, 5);
    batch.labels.push_back(testutil::randomSequences(2, 1, 1, 2, 6).labels.reshape(Shape{2, 2}));
    batch.labelsMasks.emplace_back();
    // The padded example alone, unpadded, gives the same outputs on its 4 real steps.
    const std::vector<Tensor> padded = net.output(batch.features, false, batch.featuresMasks);
    Tensor alone(Shape{1, 3, 4});
    for (int64_t k = 0; k < 3; ++k)
      for (int64_t s = 0; s < 4; ++s)
        alone.data()[k * 4 + s] = batch.features[0].data()[(3 + k) * 6 + s];
    const std::vector<Tensor> single = net.output({alone});
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t s = 0; s < 4; ++s)
        CHECK(padded[0].data()[(3 + c) * 6 + s] ==
              doctest::Approx(single[0].data()[c * 4 + s]).epsilon(1e-5));
    for (int64_t c = 0; c < 2; ++c)  // LastTimeStep reads step 4, the last real one
      CHECK(padded[1].data()[2 + c] == doctest::Approx(single[1].data()[c]).epsilon(1e-5));
    // Without the mask the padding changes the last step's answer.
    const std::vector<Tensor> unmasked = net.output(batch.features);
    CHECK(unmasked[1].data()[2] != doctest::Approx(single[1].data()[0]).epsilon(1e-5));
  }

  TEST_CASE("ComputationGraph: gradient checks on recurrent fan-out, residual add, merge, subset") {
    MultiDataSet data = paddedSequences(3, 5, 8);
    data.labels.push_back(testutil::randomSequences(3, 1, 1, 2, 9).labels.reshape(Shape{3, 2}));
    data.labelsMasks.emplace_back();
    for (const auto& vertex : std::vector<std::shared_ptr<GraphVertex>>{
             std::make_shared<ScaleVertex>(0.7), std::make_shared<ShiftVertex>(0.3)}) {
      INFO(vertex->typeName());
      ComputationGraph net(recurrentGraph(*vertex));
      net.init();
      const auto result = GradientCheckUtil::checkGradients(net, data);
      INFO(result.report);
      CHECK(result.passed);
      CHECK(result.checked >= net.numParams());
    }
    ComputationGraph broken(recurrentGraph(testing::CorruptedVertex<ScaleVertex>(1.0)));
    broken.init();
    const auto result = GradientCheckUtil::checkGradients(broken, data);
    INFO(result.report);
    CHECK_FALSE(result.passed);
  }

  TEST_CASE("ComputationGraph: activation memory is planned for each sequence length") {
    ComputationGraph net(recurrentGraph(ScaleVertex(1)));
    net.init();
    const int64_t before = net.activationMemory(true).peak;
    net.output({testutil::randomSequences(2, 3, 10, 3, 1).features});
    const int64_t ten = net.activationMemory(false).peak;
    CHECK(ten > before);
    net.output({testutil::randomSequences(2, 3, 20, 3, 1).features});
    CHECK(net.activationMemory(false).peak > ten);
    // A shorter batch after a longer one reuses the arena.
    const Tensor x = testutil::randomSequences(2, 3, 4, 3, 2).features;
    const Tensor first = net.output({x})[0];
    net.output({testutil::randomSequences(4, 3, 30, 3, 3).features});
    CHECK(net.output({x})[0].toVector() == first.toVector());
  }

  TEST_CASE("ComputationGraph: an input read by an LSTM with nIn is a sequence input") {
    const auto conf = NeuralNetConfiguration::Builder()
                          .graphBuilder()
                          .addInputs("in")
                          .addLayer("lstm", LSTM::Builder().nIn(3).nOut(4).build(), "in")
                          .addLayer("out", perStepSoftmax(2), "lstm")
                          .setOutputs("out")
                          .build();
    CHECK(conf.networkInputTypes.front().kind == InputType::Kind::Recurrent);
    CHECK(conf.networkInputTypes.front().size == 3);
  }

  TEST_CASE("ComputationGraph: sequences that do not fit are typed errors naming what is wrong") {
    auto graphWith = [](const GraphVertex& vertex) {
      return NeuralNetConfiguration::Builder()
          .graphBuilder()
          .addInputs("a", "b")
          .setInputTypes(InputType::recurrent(3), InputType::recurrent(3))
          .addLayer("la", LSTM::Builder().nOut(4).build(), "a")
          .addLayer("lb", LSTM::Builder().nOut(4).build(), "b")
          .addVertex("v", vertex, "la", "lb")
          .addLayer("out", perStepSoftmax(2), "v")
          .setOutputs("out")
          .build();
    };
    CHECK_THROWS_WITH_AS(graphWith(StackVertex()),
                         doctest::Contains("takes no sequences, but its input 0 (\"la\")"),
                         ConfigError);
    ComputationGraph net(graphWith(MergeVertex()));
    net.init();
    const Tensor a = testutil::randomSequences(2, 3, 5, 2, 1).features;
    const Tensor labels = testutil::randomSequences(2, 3, 5, 2, 1).labels;
    CHECK_THROWS_WITH_AS(
        net.output({a, testutil::randomSequences(2, 3, 6, 2, 2).features}),
        doctest::Contains("features[1] are sequences of 6 steps, features[0] of 5"), ShapeError);
    CHECK_THROWS_WITH_AS(net.output({a, Tensor(Shape{2, 4, 5})}),
                         doctest::Contains("features[1] [2, 4, 5] do not match input \"b\""),
                         ShapeError);
    CHECK_THROWS_WITH_AS(net.output({a, a}, false, {Tensor(Shape{2, 4})}),
                         doctest::Contains("1 features masks for 2 features tensors"), ShapeError);
    CHECK_THROWS_WITH_AS(net.output({a, a}, false, {Tensor(Shape{2, 4}), Tensor()}),
                         doctest::Contains("the mask of features[0] is [2, 4]"), ShapeError);
    CHECK_THROWS_WITH_AS(net.fit(MultiDataSet({a, a}, {Tensor(Shape{2, 2, 4})})),
                         doctest::Contains("labels[0] [2, 2, 4] do not match output \"out\": "
                                           "expected [2, 2, 5]"),
                         ShapeError);
    CHECK_THROWS_AS(MultiDataSet({a, a}, {labels}, {}, {Tensor(Shape{2, 3})}), DataMismatchError);
    net.fit(MultiDataSet({a, a}, {labels}));  // what fits trains
  }
}
