#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "nn/layers/SequenceTestUtil.h"

using namespace dl4cpp;

namespace {

// Sequence `e` of `batch` (steps `from` to `from + length - 1`) as a batch of its own.
DataSet oneSequence(const DataSet& batch, int64_t e, int64_t from, int64_t length) {
  auto slice = [&](const Tensor& t) {
    const int64_t c = t.dim(1), steps = t.dim(2);
    std::vector<float> v;
    for (int64_t k = 0; k < c; ++k)
      for (int64_t s = from; s < from + length; ++s) v.push_back(t.at((e * c + k) * steps + s));
    return Tensor::fromVector({1, c, length}, v);
  };
  return {slice(batch.features), slice(batch.labels)};
}

// Two sequences of 3 and 5 steps padded to 5 (the short one at `shortFrom`): the padded batch
// scores and trains exactly as the two run one at a time (the mean of their scores and gradients),
// and answers the same at the real steps.
void checkPaddedEqualsUnpadded(const Layer& recurrent, int64_t shortFrom) {
  DataSet batch = testutil::randomSequences(2, 3, 5, 3, 17);
  std::vector<float> mask{0, 0, 0, 0, 0, 1, 1, 1, 1, 1};
  for (int64_t s = shortFrom; s < shortFrom + 3; ++s) mask[static_cast<size_t>(s)] = 1;
  batch.featuresMask = Tensor::fromVector({2, 5}, mask);
  batch.labelsMask = batch.featuresMask.clone();
  // Whatever the padded steps hold must not matter.
  for (int64_t k = 0; k < 3; ++k)
    for (int64_t s = 0; s < 5; ++s)
      if (mask[static_cast<size_t>(s)] == 0) batch.features.data()[k * 5 + s] = 7.0f;

  MultiLayerNetwork net = testutil::sequenceNetwork(recurrent, 3, 3);
  const DataSet a = oneSequence(batch, 0, shortFrom, 3), b = oneSequence(batch, 1, 0, 5);

  const double scoreA = net.score(a), scoreB = net.score(b);
  CHECK(net.score(batch) == doctest::Approx((scoreA + scoreB) / 2).epsilon(1e-5));

  net.computeGradientAndScore(a);
  const std::vector<float> gradA = net.gradient().toVector();
  net.computeGradientAndScore(b);
  const std::vector<float> gradB = net.gradient().toVector();
  const double padded = net.computeGradientAndScore(batch);
  CHECK(padded == doctest::Approx((scoreA + scoreB) / 2).epsilon(1e-5));
  const std::vector<float> grad = net.gradient().toVector();
  REQUIRE(grad.size() == gradA.size());
  for (size_t i = 0; i < grad.size(); ++i) {
    INFO("parameter " << i);
    CHECK(grad[i] == doctest::Approx((gradA[i] + gradB[i]) / 2).epsilon(1e-4));
  }

  const Tensor out = net.output(batch.features, false, batch.featuresMask);
  const Tensor outA = net.output(a.features);
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t s = 0; s < 3; ++s)
      CHECK(out.at(c * 5 + shortFrom + s) == doctest::Approx(outA.at(c * 3 + s)).epsilon(1e-5));

  // Evaluation counts the 8 real steps only.
  ListDataSetIterator it(std::vector<DataSet>{batch}, 2);
  CHECK(net.evaluate(it).getNumRowCounter() == 8);
}

}  // namespace

TEST_SUITE("nn/multilayer") {
  TEST_CASE("Sequences: a padded LSTM batch (padding at the end) equals its sequences one by one") {
    checkPaddedEqualsUnpadded(LSTM::Builder().nOut(4).build(), 0);
  }

  TEST_CASE("Sequences: padding at the start (ALIGN_END) too, the state starting afresh") {
    checkPaddedEqualsUnpadded(LSTM::Builder().nOut(4).build(), 2);
  }

  TEST_CASE("Sequences: a padded SimpleRnn batch equals its sequences one by one") {
    checkPaddedEqualsUnpadded(SimpleRnn::Builder().nOut(4).build(), 0);
  }

  TEST_CASE("Sequences: masks and sequences of the wrong shape are typed errors") {
    MultiLayerNetwork net = testutil::sequenceNetwork(LSTM::Builder().nOut(2).build(), 3, 2);
    DataSet batch = testutil::randomSequences(2, 3, 4, 2, 1);
    batch.featuresMask = Tensor(Shape{2, 3});
    CHECK_THROWS_AS(net.fit(batch), ShapeError);
    batch.featuresMask = Tensor();
    batch.labelsMask = Tensor(Shape{3, 4});
    CHECK_THROWS_AS(net.score(batch), ShapeError);
    CHECK_THROWS_AS(net.output(Tensor(Shape{2, 4, 4})), ShapeError);  // 4 features, not 3
    CHECK_THROWS_AS(net.output(Tensor(Shape{2, 3})), ShapeError);     // rows, not sequences

    MultiLayerNetwork fixed(NeuralNetConfiguration::Builder()
                                .list()
                                .layer(LSTM::Builder().nOut(2).build())
                                .layer(RnnOutputLayer::Builder().nOut(2).build())
                                .setInputType(InputType::recurrent(3, 4))
                                .build());
    fixed.init();
    CHECK_NOTHROW(fixed.output(Tensor(Shape{1, 3, 4})));
    CHECK_THROWS_AS(fixed.output(Tensor(Shape{1, 3, 5})), ShapeError);  // longer than declared
  }

  TEST_CASE("Sequences: a ComputationGraph refuses sequences of another declared length") {
    ComputationGraph fixed(NeuralNetConfiguration::Builder()
                               .graphBuilder()
                               .addInputs("in")
                               .setInputTypes(InputType::recurrent(3, 4))
                               .addLayer("lstm", LSTM::Builder().nOut(2).build(), "in")
                               .addLayer("out", RnnOutputLayer::Builder().nOut(2).build(), "lstm")
                               .setOutputs("out")
                               .build());
    fixed.init();
    CHECK(fixed.outputSingle(Tensor(Shape{1, 3, 4})).shape() == Shape{1, 2, 4});
    CHECK_THROWS_WITH_AS(fixed.outputSingle(Tensor(Shape{1, 3, 5})),
                         doctest::Contains("expected [1, 3, 4]: examples, features, time steps"),
                         ShapeError);
  }

  TEST_CASE("Sequences: an LSTM network learns to echo its input's sign") {
    // Label at each step: whether the input at that step is positive.
    DataSet data = testutil::randomSequences(16, 1, 6, 2, 4);
    for (int64_t e = 0; e < 16; ++e)
      for (int64_t s = 0; s < 6; ++s) {
        const bool positive = data.features.at(e * 6 + s) > 0;
        data.labels.data()[(e * 2 + 0) * 6 + s] = positive ? 0.0f : 1.0f;
        data.labels.data()[(e * 2 + 1) * 6 + s] = positive ? 1.0f : 0.0f;
      }
    MultiLayerNetwork net(NeuralNetConfiguration::Builder()
                              .seed(1)
                              .updater(Adam(0.05))
                              .list()
                              .layer(LSTM::Builder().nOut(6).build())
                              .layer(RnnOutputLayer::Builder(LossFunction::MCXENT)
                                         .nOut(2)
                                         .activation(Activation::SOFTMAX)
                                         .build())
                              .setInputType(InputType::recurrent(1))
                              .build());
    net.init();
    const double before = net.score(data);
    for (int i = 0; i < 150; ++i) net.fit(data);
    CHECK(net.score(data) < before * 0.5);
    ListDataSetIterator it(std::vector<DataSet>{data}, 16);
    CHECK(net.evaluate(it).accuracy() > 0.9);
  }
}
