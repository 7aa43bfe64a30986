#include <doctest/doctest.h>

#include <cmath>

#include "nn/layers/LayerTestUtil.h"
#include "nn/layers/LossOutputRuntime.h"

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
  REQUIRE(b.layer->asLossOutput() != nullptr);
  return b.layer->asLossOutput()->lossGradient(ctx, y, labels, dz);
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

  TEST_CASE("OutputLayer: MEAN_ABSOLUTE_ERROR, L1 and L2 (DL4J's: only MAE averages outputs)") {
    // y = [1, 3], l = [0, 1]
    struct Case {
      LossFunction loss;
      double score;
      std::vector<float> gradient;
    };
    for (const Case& c :
         {Case{LossFunction::MEAN_ABSOLUTE_ERROR, (1 + 2) / 2.0, {0.5f, 0.5f}},
          Case{LossFunction::L1, 1 + 2, {1, 1}}, Case{LossFunction::L2, 1 + 4, {2, 4}}}) {
      INFO("loss " << toString(c.loss));
      auto b = identityOutput(c.loss, Activation::IDENTITY, 2);
      Tensor dz(Shape{1, 2});
      const double loss = lossAndGradient(b, Tensor::fromVector({1, 2}, {1, 3}),
                                          Tensor::fromVector({1, 2}, {0, 1}), dz);
      CHECK(loss == doctest::Approx(c.score));
      testutil::checkValues(dz, c.gradient);
    }
  }

  TEST_CASE("OutputLayer: HINGE and SQUARED_HINGE on labels -1 and +1, and DL4J's 0 label") {
    // y = [0.5, -2, 0.25], l = [1, -1, 0]: margins 1 - l y = [0.5, -1, 1].
    const Tensor y = Tensor::fromVector({1, 3}, {0.5f, -2, 0.25f});
    const Tensor labels = Tensor::fromVector({1, 3}, {1, -1, 0});
    Tensor dz(Shape{1, 3});
    auto hinge = identityOutput(LossFunction::HINGE, Activation::IDENTITY, 3);
    // max(0, margin) = [0.5, 0, 1]; dL/dy = -l where the margin is positive.
    CHECK(lossAndGradient(hinge, y, labels, dz) == doctest::Approx(1.5));
    testutil::checkValues(dz, {-1, 0, 0});
    auto squared = identityOutput(LossFunction::SQUARED_HINGE, Activation::IDENTITY, 3);
    // [0.25, 0, 1]; dL/dy = -2 l margin.
    CHECK(lossAndGradient(squared, y, labels, dz) == doctest::Approx(1.25));
    testutil::checkValues(dz, {-1, 0, 0});
  }

  TEST_CASE("OutputLayer: KL_DIVERGENCE with SOFTMAX") {
    auto b = identityOutput(LossFunction::KL_DIVERGENCE, Activation::SOFTMAX, 2);
    Tensor dz(Shape{1, 2});
    // z = [0, ln 3] -> y = [0.25, 0.75]; l = [0.5, 0.5]: sum l ln(l / y); dL/dz = y sum(l) - l.
    const double loss = lossAndGradient(b, Tensor::fromVector({1, 2}, {0, std::log(3.0f)}),
                                        Tensor::fromVector({1, 2}, {0.5f, 0.5f}), dz);
    CHECK(loss == doctest::Approx(0.5 * std::log(2.0) + 0.5 * std::log(2.0 / 3.0)).epsilon(1e-5));
    testutil::checkValues(dz, {-0.25f, 0.25f});
  }
}
