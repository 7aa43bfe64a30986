#include <doctest/doctest.h>

#include "nn/layers/LayerTestUtil.h"

using namespace dl4cpp;

TEST_SUITE("nn/layers") {
  // x (1, 1, 4, 4) = 1..16 row-major
  const std::vector<float> kImage{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

  TEST_CASE("SubsamplingLayer: MAX 2x2/2 forward and backward route to the arg-max") {
    auto b = testutil::bind(
        SubsamplingLayer::Builder(PoolingType::MAX).kernelSize(2, 2).stride(2, 2).build(),
        InputType::convolutional(4, 4, 1), {});
    DeviceContext ctx;
    const Tensor x = Tensor::fromVector({1, 1, 4, 4}, kImage);
    Tensor y(Shape{1, 1, 2, 2});
    b.layer->forward(ctx, x, y, testutil::mode(true));
    testutil::checkValues(y, {6, 8, 14, 16});
    const Tensor g = Tensor::fromVector({1, 1, 2, 2}, {1, 2, 3, 4});
    Tensor dx(Shape{1, 1, 4, 4});
    b.layer->backwardInput(ctx, g, dx);
    testutil::checkValues(dx, {0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4});
  }

  TEST_CASE("SubsamplingLayer: AVG 2x2/2 forward and backward spread evenly") {
    auto b = testutil::bind(SubsamplingLayer::Builder(PoolingType::AVG, 2, 2, 2, 2).build(),
                            InputType::convolutional(4, 4, 1), {});
    DeviceContext ctx;
    const Tensor x = Tensor::fromVector({1, 1, 4, 4}, kImage);
    Tensor y(Shape{1, 1, 2, 2});
    b.layer->forward(ctx, x, y, testutil::mode(true));
    testutil::checkValues(y, {3.5f, 5.5f, 11.5f, 13.5f});
    const Tensor g = Tensor::fromVector({1, 1, 2, 2}, {4, 8, 12, 16});
    Tensor dx(Shape{1, 1, 4, 4});
    b.layer->backwardInput(ctx, g, dx);
    testutil::checkValues(dx, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  }

  TEST_CASE("SubsamplingLayer: AVG excludes padding from the divisor") {
    // 3x3 kernel, stride 1, padding 1 over a 2x2 image: every window sees the 4 real pixels
    // (1, 2, 3, 4), so the average is 10 / 4 = 2.5, not 10 / 9.
    auto b = testutil::bind(
        SubsamplingLayer::Builder(PoolingType::AVG, 3, 3, 1, 1).padding(1, 1).build(),
        InputType::convolutional(2, 2, 1), {});
    DeviceContext ctx;
    Tensor y(Shape{1, 1, 2, 2});
    b.layer->forward(ctx, Tensor::fromVector({1, 1, 2, 2}, {1, 2, 3, 4}), y, testutil::mode(false));
    testutil::checkValues(y, {2.5f, 2.5f, 2.5f, 2.5f});
  }

  TEST_CASE("SubsamplingLayer: two MAX layers of equal shape keep separate arg-max records") {
    auto conf = SubsamplingLayer::Builder(PoolingType::MAX, 2, 2, 2, 2).build();
    auto first = testutil::bind(conf, InputType::convolutional(2, 2, 1), {});
    auto second = testutil::bind(conf, InputType::convolutional(2, 2, 1), {});
    DeviceContext ctx;
    Tensor y(Shape{1, 1, 1, 1});
    first.layer->forward(ctx, Tensor::fromVector({1, 1, 2, 2}, {9, 0, 0, 0}), y,
                         testutil::mode(true));
    second.layer->forward(ctx, Tensor::fromVector({1, 1, 2, 2}, {0, 0, 0, 9}), y,
                          testutil::mode(true));
    Tensor dx(Shape{1, 1, 2, 2});
    first.layer->backwardInput(ctx, Tensor::fromVector({1, 1, 1, 1}, {1}), dx);
    testutil::checkValues(dx, {1, 0, 0, 0});
  }

  TEST_CASE("SubsamplingLayer: SUM and PNORM are ConfigErrors (GlobalPoolingLayer has them)") {
    for (PoolingType type : {PoolingType::SUM, PoolingType::PNORM}) {
      CAPTURE(toString(type));
      auto conf = SubsamplingLayer::Builder(type, 2, 2, 2, 2).build();
      try {
        conf.resolve(3, InputType::convolutional(4, 4, 1), LayerDefaults{});
        FAIL("expected a ConfigError");
      } catch (const ConfigError& e) {
        const std::string message = e.what();
        CHECK(message.find("layer 3 (SubsamplingLayer)") != std::string::npos);
        CHECK(message.find("poolingType " + toString(type)) != std::string::npos);
      }
    }
  }
}
