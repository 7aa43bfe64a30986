// ComputationGraph's truncated BPTT and rnnTimeStep: a chain graph trains to MultiLayerNetwork's
// bits with truncated BPTT and masks, a two-input two-output graph cuts every sequence into the
// same segments, rnnTimeStep step by step gives what output() gives for the whole sequences, and
// what does not fit is a typed error.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <vector>

#include "nn/layers/SequenceTestUtil.h"

using namespace dl4cpp;
using testutil::perStepSoftmax;

namespace {

// Steps [start, start + len) of sequences (N, C, T).
Tensor stepsOf(const Tensor& x, int64_t start, int64_t len) {
  const int64_t rows = x.dim(0) * x.dim(1), t = x.dim(2);
  Tensor out(Shape{x.dim(0), x.dim(1), len});
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t s = 0; s < len; ++s) out.data()[r * len + s] = x.data()[r * t + start + s];
  return out;
}

// Two sequence inputs merged into an LSTM, a per-step softmax on it and a second one on a
// SimpleRnn over input b.
ComputationGraphConfiguration twoByTwo(BackpropType backprop) {
  return NeuralNetConfiguration::Builder()
      .seed(14)
      .updater(Adam(1e-2))
      .graphBuilder()
      .addInputs("a", "b")
      .setInputTypes(InputType::recurrent(3), InputType::recurrent(2))
      .addLayer("lstm", LSTM::Builder().nOut(5).build(), "a", "b")
      .addLayer("rnn", SimpleRnn::Builder().nOut(4).build(), "b")
      .addLayer("out1", perStepSoftmax(3), "lstm")
      .addLayer("out2", perStepSoftmax(2), "rnn")
      .setOutputs("out1", "out2")
      .backpropType(backprop)
      .tBPTTLength(4)
      .build();
}

MultiDataSet twoByTwoData(int64_t steps, uint64_t seed) {
  const DataSet a = testutil::randomSequences(3, 3, steps, 3, seed);
  const DataSet b = testutil::randomSequences(3, 2, steps, 2, seed + 1);
  return MultiDataSet({a.features, b.features}, {a.labels, b.labels});
}

}  // namespace

TEST_SUITE("ComputationGraph") {
  TEST_CASE("ComputationGraph: truncated BPTT trains a chain to MultiLayerNetwork's bits") {
    auto base = [] { return NeuralNetConfiguration::Builder().seed(9).updater(Adam(1e-2)); };
    MultiLayerNetwork net(base()
                              .list()
                              .layer(LSTM::Builder().nOut(4).build())
                              .layer(perStepSoftmax(3))
                              .setInputType(InputType::recurrent(3))
                              .backpropType(BackpropType::TruncatedBPTT)
                              .tBPTTForwardLength(4)
                              .tBPTTBackwardLength(2)
                              .build());
    net.init();
    const ComputationGraphConfiguration conf =
        base()
            .graphBuilder()
            .addInputs("in")
            .setInputTypes(InputType::recurrent(3))
            .addLayer("lstm", LSTM::Builder().nOut(4).build(), "in")
            .addLayer("out", perStepSoftmax(3), "lstm")
            .setOutputs("out")
            .backpropType(BackpropType::TruncatedBPTT)
            .tBPTTForwardLength(4)
            .tBPTTBackwardLength(2)
            .build();
    CHECK((conf.backpropType == BackpropType::TruncatedBPTT));
    CHECK(ComputationGraphConfiguration::fromJson(conf.toJson()) == conf);
    ComputationGraph graph(conf);
    graph.init();
    graph.setParams(net.params());

    DataSet data = testutil::randomSequences(3, 3, 10, 3, 4);
    Tensor mask(Shape{3, 10});
    mask.fill(1);
    for (int64_t s = 7; s < 10; ++s) mask.data()[10 + s] = 0;
    data.featuresMask = mask;
    data.labelsMask = mask.clone();
    for (int i = 0; i < 3; ++i) {
      net.fit(data);
      graph.fit(MultiDataSet(data));
    }
    CHECK(graph.getIterationCount() == 9);  // three segments (4, 4, 2 steps) per minibatch
    CHECK(graph.params().toVector() == net.params().toVector());
    CHECK(graph.score() == net.score());
  }

  TEST_CASE("ComputationGraph: truncated BPTT cuts every sequence input and label alike") {
    ComputationGraph truncated(twoByTwo(BackpropType::TruncatedBPTT));
    truncated.init();
    ComputationGraph segmentByHand(twoByTwo(BackpropType::Standard));
    segmentByHand.init();
    const MultiDataSet data = twoByTwoData(10, 5);
    truncated.fit(data);
    CHECK(truncated.getIterationCount() == 3);
    // A minibatch of one segment is one update through all its steps (backward length = forward
    // length here), as in standard mode.
    ComputationGraph oneSegment(twoByTwo(BackpropType::TruncatedBPTT));
    oneSegment.init();
    MultiDataSet first({stepsOf(data.features[0], 0, 4), stepsOf(data.features[1], 0, 4)},
                       {stepsOf(data.labels[0], 0, 4), stepsOf(data.labels[1], 0, 4)});
    oneSegment.fit(first);
    CHECK(oneSegment.getIterationCount() == 1);
    segmentByHand.fit(first);
    CHECK(oneSegment.params().toVector() == segmentByHand.params().toVector());
    // Three segments differ from one standard step over the whole sequences.
    ComputationGraph standard(twoByTwo(BackpropType::Standard));
    standard.init();
    standard.fit(data);
    CHECK(standard.params().toVector() != truncated.params().toVector());

    // A graph with an output of one vector per sequence has no labels per step to cut.
    ComputationGraph lastStep(
        NeuralNetConfiguration::Builder()
            .graphBuilder()
            .addInputs("in")
            .setInputTypes(InputType::recurrent(3))
            .addLayer("last", LastTimeStep(LSTM::Builder().nOut(4).build()), "in")
            .addLayer("out", OutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build(),
                      "last")
            .setOutputs("out")
            .backpropType(BackpropType::TruncatedBPTT)
            .build());
    lastStep.init();
    const DataSet seq = testutil::randomSequences(2, 3, 6, 2, 1);
    CHECK_THROWS_WITH_AS(lastStep.fit(DataSet(seq.features, Tensor(Shape{2, 2}))),
                         doctest::Contains("output \"out\" gives [2, 2]"), ConfigError);
    CHECK_THROWS_WITH_AS(NeuralNetConfiguration::Builder()
                             .graphBuilder()
                             .addInputs("in")
                             .setInputTypes(InputType::recurrent(3))
                             .addLayer("out", perStepSoftmax(2), "in")
                             .setOutputs("out")
                             .tBPTTForwardLength(4)
                             .tBPTTBackwardLength(5)
                             .build(),
                         doctest::Contains("tBPTTBackwardLength must be between 1 and "
                                           "tBPTTForwardLength (4), got 5"),
                         ConfigError);
  }

  TEST_CASE("ComputationGraph: rnnTimeStep step by step gives output() of the whole sequences") {
    ComputationGraph graph(twoByTwo(BackpropType::Standard));
    graph.init();
    const MultiDataSet data = twoByTwoData(6, 8);
    const std::vector<Tensor> whole = graph.output(data.features);
    std::vector<std::vector<float>> stepwise(2);
    for (int64_t s = 0; s < 6; ++s) {
      const Tensor a = stepsOf(data.features[0], s, 1), b = stepsOf(data.features[1], s, 1);
      const std::vector<Tensor> y =
          graph.rnnTimeStep({a.reshape(Shape{3, 3}), b.reshape(Shape{3, 2})});
      REQUIRE(y.size() == 2);
      CHECK(y[0].shape() == Shape{3, 3});
      CHECK(y[1].shape() == Shape{3, 2});
      for (size_t j = 0; j < 2; ++j) stepwise[j].push_back(y[j].at(0));
    }
    for (size_t j = 0; j < 2; ++j)
      for (int64_t s = 0; s < 6; ++s) {
        CAPTURE(j);
        CAPTURE(s);
        CHECK(stepwise[j][static_cast<size_t>(s)] ==
              doctest::Approx(whole[j].at(s)).epsilon(1e-5));  // example 0, class 0, step s
      }

    // Several steps at once continue from the kept state; clearing starts again from zero.
    graph.rnnClearPreviousState();
    const std::vector<Tensor> firstHalf =
        graph.rnnTimeStep({stepsOf(data.features[0], 0, 3), stepsOf(data.features[1], 0, 3)});
    const std::vector<Tensor> secondHalf =
        graph.rnnTimeStep({stepsOf(data.features[0], 3, 3), stepsOf(data.features[1], 3, 3)});
    CHECK(secondHalf[0].shape() == Shape{3, 3, 3});
    CHECK(secondHalf[0].at(0) == doctest::Approx(whole[0].at(3)).epsilon(1e-5));
    graph.rnnClearPreviousState();
    CHECK(graph.rnnTimeStep({stepsOf(data.features[0], 0, 3), stepsOf(data.features[1], 0, 3)})[0]
              .toVector() == firstHalf[0].toVector());

    ComputationGraph rows(
        NeuralNetConfiguration::Builder()
            .graphBuilder()
            .addInputs("in")
            .setInputTypes(InputType::feedForward(3))
            .addLayer("out", OutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build(),
                      "in")
            .setOutputs("out")
            .build());
    rows.init();
    CHECK_THROWS_WITH_AS(rows.rnnTimeStep({Tensor(Shape{1, 3})}),
                         doctest::Contains("takes no sequences"), ConfigError);
  }
}
