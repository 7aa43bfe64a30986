#include <doctest/doctest.h>

#include <vector>

#include "nn/layers/SequenceTestUtil.h"

using namespace dl4cpp;

namespace {

// Steps [from, from + length) of a (N, C, T) tensor.
Tensor steps(const Tensor& x, int64_t from, int64_t length) {
  const int64_t n = x.dim(0), c = x.dim(1), t = x.dim(2);
  std::vector<float> v;
  for (int64_t e = 0; e < n; ++e)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t s = from; s < from + length; ++s) v.push_back(x.at((e * c + k) * t + s));
  return Tensor::fromVector({n, c, length}, v);
}

// Step `s` of a (N, C, T) tensor as (N, C).
Tensor step(const Tensor& x, int64_t s) {
  const Tensor one = steps(x, s, 1);
  return one.reshape({one.dim(0), one.dim(1)});
}

// out (N, C, T) at step `s` equals y (N, C).
void checkStep(const Tensor& out, int64_t s, const Tensor& y) {
  const int64_t n = out.dim(0), c = out.dim(1), t = out.dim(2);
  REQUIRE(y.shape() == Shape{n, c});
  for (int64_t e = 0; e < n; ++e)
    for (int64_t k = 0; k < c; ++k) {
      INFO("example " << e << ", output " << k << ", step " << s);
      CHECK(y.at(e * c + k) == doctest::Approx(out.at((e * c + k) * t + s)).epsilon(1e-5));
    }
}

void checkSteppingEqualsOutput(const Layer& recurrent) {
  // Two recurrent layers, so that the state of each is kept.
  MultiLayerNetwork net(NeuralNetConfiguration::Builder()
                            .seed(4)
                            .list()
                            .layer(recurrent)
                            .layer(recurrent)
                            .layer(RnnOutputLayer::Builder(LossFunction::MCXENT)
                                       .nOut(3)
                                       .activation(Activation::SOFTMAX)
                                       .build())
                            .setInputType(InputType::recurrent(3))
                            .build());
  net.init();
  const Tensor x = testutil::randomSequences(2, 3, 7, 3, 31).features;
  const Tensor whole = net.output(x);

  for (int64_t s = 0; s < 7; ++s) checkStep(whole, s, net.rnnTimeStep(step(x, s)));

  // Several steps at a time, after clearing: the same.
  net.rnnClearPreviousState();
  const Tensor first = net.rnnTimeStep(steps(x, 0, 3));
  const Tensor rest = net.rnnTimeStep(steps(x, 3, 4));
  REQUIRE(first.shape() == Shape{2, 3, 3});
  REQUIRE(rest.shape() == Shape{2, 3, 4});
  for (int64_t s = 0; s < 3; ++s) checkStep(whole, s, step(first, s));
  for (int64_t s = 0; s < 4; ++s) checkStep(whole, 3 + s, step(rest, s));

  // The kept state matters: without clearing, step 0's input answers otherwise than at first...
  const Tensor again = net.rnnTimeStep(step(x, 0));
  CHECK_FALSE(again.allClose(step(whole, 0), 1e-4f));
  // ...output() leaves it alone...
  const Tensor between = net.output(x);
  CHECK(between.toVector() == whole.toVector());
  // ...and after clearing it starts from zero again.
  net.rnnClearPreviousState();
  checkStep(whole, 0, net.rnnTimeStep(step(x, 0)));
  checkStep(whole, 1, net.rnnTimeStep(step(x, 1)));

  // Another number of sequences than the kept state's is an error until it is cleared.
  const Tensor three = testutil::randomSequences(3, 3, 2, 3, 32).features;
  CHECK_THROWS_AS(net.rnnTimeStep(three), ShapeError);
  net.rnnClearPreviousState();
  CHECK(net.rnnTimeStep(three).shape() == Shape{3, 3, 2});
}

}  // namespace

TEST_SUITE("nn/multilayer") {
  TEST_CASE("rnnTimeStep: an LSTM stepped one step at a time equals output() on the sequence") {
    checkSteppingEqualsOutput(LSTM::Builder().nOut(5).build());
  }

  TEST_CASE("rnnTimeStep: a SimpleRnn too") {
    checkSteppingEqualsOutput(SimpleRnn::Builder().nOut(5).build());
  }

  TEST_CASE(
      "rnnTimeStep: a network not taking sequences is a ConfigError, bad ranks a ShapeError") {
    MultiLayerNetwork seq = testutil::sequenceNetwork(LSTM::Builder().nOut(4).build(), 3, 3);
    CHECK_THROWS_AS(seq.rnnTimeStep(Tensor(Shape{2})), ShapeError);
    CHECK_THROWS_AS(seq.rnnTimeStep(Tensor(Shape{2, 4})), ShapeError);
    MultiLayerNetwork dense(NeuralNetConfiguration::Builder()
                                .list()
                                .layer(DenseLayer::Builder().nIn(3).nOut(2).build())
                                .layer(OutputLayer::Builder(LossFunction::MCXENT)
                                           .nOut(2)
                                           .activation(Activation::SOFTMAX)
                                           .build())
                                .build());
    dense.init();
    CHECK_THROWS_AS(dense.rnnTimeStep(Tensor(Shape{2, 3})), ConfigError);
  }
}
