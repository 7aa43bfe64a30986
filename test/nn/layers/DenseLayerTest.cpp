#include <doctest/doctest.h>

#include <cmath>

#include "nn/layers/LayerTestUtil.h"

using namespace dl4cpp;

TEST_SUITE("nn/layers") {
  TEST_CASE("DenseLayer: forward equals x W^T + b through the activation") {
    // W (nOut=2, nIn=3) = [[1, 2, 3], [-1, 0, 1]], b = [0.5, -0.5]
    auto b =
        testutil::bind(DenseLayer::Builder().nIn(3).nOut(2).activation(Activation::RELU).build(),
                       InputType::feedForward(3), {{1, 2, 3, -1, 0, 1}, {0.5f, -0.5f}});
    DeviceContext ctx;
    // x = [[1, 1, 1], [2, 0, -1]]
    const Tensor x = Tensor::fromVector({2, 3}, {1, 1, 1, 2, 0, -1});
    Tensor y(Shape{2, 2});
    b.layer->forward(ctx, x, y, testutil::mode(false));
    // row 0: [1+2+3+0.5, -1+0+1-0.5] = [6.5, -0.5] -> relu [6.5, 0]
    // row 1: [2+0-3+0.5, -2+0-1-0.5] = [-0.5, -3.5] -> relu [0, 0]
    testutil::checkValues(y, {6.5f, 0, 0, 0});
  }

  TEST_CASE("DenseLayer: backward gives hand-computed weight, bias and input gradients") {
    auto b = testutil::bind(
        DenseLayer::Builder().nIn(2).nOut(2).activation(Activation::IDENTITY).build(),
        InputType::feedForward(2), {{1, 2, 3, 4}, {0, 0}});
    DeviceContext ctx;
    const Tensor x = Tensor::fromVector({1, 2}, {5, 7});
    Tensor y(Shape{1, 2});
    b.layer->forward(ctx, x, y, testutil::mode(true));
    testutil::checkValues(y, {1 * 5 + 2 * 7, 3 * 5 + 4 * 7});
    Tensor g = Tensor::fromVector({1, 2}, {1, -2});
    b.layer->backwardActivation(ctx, y, g);
    b.layer->backwardParams(ctx, x, g);
    // dW = g^T x = [[5, 7], [-10, -14]]; db = g; dx = g W = [1 - 6, 2 - 8]
    testutil::checkValues(b.grads[0], {5, 7, -10, -14});
    testutil::checkValues(b.grads[1], {1, -2});
    Tensor dx(Shape{1, 2});
    b.layer->backwardInput(ctx, g, dx);
    testutil::checkValues(dx, {-5, -6});
  }

  TEST_CASE("DenseLayer: every activation's forward matches its formula") {
    const std::vector<float> z{-2.0f, -0.5f, 0.0f, 1.5f};
    struct Case {
      Activation act;
      std::vector<float> expected;
    };
    const float e = std::exp(1.0f);
    (void)e;
    std::vector<float> soft(4);
    float sum = 0;
    for (size_t i = 0; i < 4; ++i) sum += std::exp(z[i]);
    for (size_t i = 0; i < 4; ++i) soft[i] = std::exp(z[i]) / sum;
    const std::vector<Case> cases{
        {Activation::IDENTITY, z},
        {Activation::RELU, {0, 0, 0, 1.5f}},
        {Activation::LEAKYRELU, {-0.02f, -0.005f, 0, 1.5f}},
        {Activation::TANH, {std::tanh(-2.0f), std::tanh(-0.5f), 0, std::tanh(1.5f)}},
        {Activation::SIGMOID,
         {1 / (1 + std::exp(2.0f)), 1 / (1 + std::exp(0.5f)), 0.5f, 1 / (1 + std::exp(-1.5f))}},
        {Activation::SOFTMAX, soft},
    };
    for (const auto& c : cases) {
      INFO("activation " << toString(c.act));
      // Identity weights pass z through unchanged, so y = f(z).
      auto b = testutil::bind(DenseLayer::Builder().nIn(4).nOut(4).activation(c.act).build(),
                              InputType::feedForward(4),
                              {{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, {0, 0, 0, 0}});
      DeviceContext ctx;
      Tensor y(Shape{1, 4});
      b.layer->forward(ctx, Tensor::fromVector({1, 4}, z), y, testutil::mode(false));
      testutil::checkValues(y, c.expected);
    }
  }
}
