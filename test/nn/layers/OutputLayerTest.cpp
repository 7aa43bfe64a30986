#include <dl4cpp/nn/layers/OutputLayer.h>
#include <doctest/doctest.h>

#include <cmath>

#include "nn/layers/LayerTestUtil.h"

using namespace dl4cpp;

namespace {
// An output layer with identity weights and zero bias, so its pre-activation equals its input.
testutil::BoundLayer identityOutput(LossFunction loss, Activation act, int64_t n) {
  std::vector<float> eye(static_cast<size_t>(n * n), 0.0f);
  for (int64_t i = 0; i < n; ++i) eye[static_cast<size_t>(i * n + i)] = 1.0f;
  return testutil::bind(OutputLayer::Builder(loss).nIn(n).nOut(n).activation(act).build(),
                        InputType::feedForward(n),
                        {eye, std::vector<float>(static_cast<size_t>(n), 0.0f)});
}

double lossAndGradient(testutil::BoundLayer& b, const Tensor& z, const Tensor& labels, Tensor& dz) {
  DeviceContext ctx;
  Tensor y(z.shape());
  b.layer->forward(ctx, z, y, testutil::mode(true));
  return static_cast<layers::OutputLayer&>(*b.layer).lossGradient(ctx, y, labels, dz);
}
}  // namespace

TEST_SUITE("nn/layers") {
  TEST_CASE("OutputLayer: softmax + NEGATIVELOGLIKELIHOOD loss and gradient by hand") {
    auto b = identityOutput(LossFunction::NEGATIVELOGLIKELIHOOD, Activation::SOFTMAX, 2);
    // z = [0, ln 3] -> softmax [0.25, 0.75]; label class 1: loss -ln 0.75, dL/dz = y - l.
    Tensor dz(Shape{1, 2});
    const double loss = lossAndGradient(b, Tensor::fromVector({1, 2}, {0, std::log(3.0f)}),
                                        Tensor::fromVector({1, 2}, {0, 1}), dz);
    CHECK(loss == doctest::Approx(-std::log(0.75)).epsilon(1e-5));
    testutil::checkValues(dz, {0.25f, -0.25f});
  }

  TEST_CASE("OutputLayer: MCXENT sums the loss over the batch") {
    auto b = identityOutput(LossFunction::MCXENT, Activation::SOFTMAX, 2);
    Tensor dz(Shape{2, 2});
    const double loss = lossAndGradient(b, Tensor::fromVector({2, 2}, {0, 0, 0, std::log(3.0f)}),
                                        Tensor::fromVector({2, 2}, {1, 0, 0, 1}), dz);
    CHECK(loss == doctest::Approx(-std::log(0.5) - std::log(0.75)).epsilon(1e-5));
    testutil::checkValues(dz, {-0.5f, 0.5f, 0.25f, -0.25f});
  }

  TEST_CASE("OutputLayer: MSE with IDENTITY averages over outputs (DL4J's LossMSE)") {
    auto b = identityOutput(LossFunction::MSE, Activation::IDENTITY, 2);
    Tensor dz(Shape{1, 2});
    // y = [1, 3], l = [0, 1]: loss = (1 + 4) / 2 = 2.5, dL/dy = 2 (y - l) / 2 = [1, 2]
    const double loss = lossAndGradient(b, Tensor::fromVector({1, 2}, {1, 3}),
                                        Tensor::fromVector({1, 2}, {0, 1}), dz);
    CHECK(loss == doctest::Approx(2.5));
    testutil::checkValues(dz, {1, 2});
  }

  TEST_CASE("OutputLayer: XENT with SIGMOID is binary cross-entropy") {
    auto b = identityOutput(LossFunction::XENT, Activation::SIGMOID, 1);
    Tensor dz(Shape{1, 1});
    // z = 0 -> y = 0.5, label 1: loss ln 2, dL/dz = y - l = -0.5
    const double loss =
        lossAndGradient(b, Tensor::fromVector({1, 1}, {0}), Tensor::fromVector({1, 1}, {1}), dz);
    CHECK(loss == doctest::Approx(std::log(2.0)).epsilon(1e-5));
    testutil::checkValues(dz, {-0.5f});
  }
}
