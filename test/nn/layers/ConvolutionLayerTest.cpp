#include <doctest/doctest.h>

#include "nn/layers/LayerTestUtil.h"

using namespace dl4cpp;

TEST_SUITE("nn/layers") {
  TEST_CASE("ConvolutionLayer: forward of a 2x2 kernel over a 3x3 image by hand") {
    // One input channel, two filters. Params in DL4J order: b, then W (2, 1, 2, 2).
    auto b = testutil::bind(
        ConvolutionLayer::Builder(2, 2).nOut(2).activation(Activation::IDENTITY).build(),
        InputType::convolutional(3, 3, 1),
        {{0.5f, -1.0f}, {1, 0, 0, 1, /* filter 2 */ 1, 1, 1, 1}});
    DeviceContext ctx;
    // x = [[1 2 3], [4 5 6], [7 8 9]]
    const Tensor x = Tensor::fromVector({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
    Tensor y(Shape{1, 2, 2, 2});
    b.layer->forward(ctx, x, y, testutil::mode(false));
    // filter 1 (diagonal): x[i][j] + x[i+1][j+1] + 0.5 -> [6.5, 8.5, 12.5, 14.5]
    // filter 2 (sum of window) - 1 -> [11, 15, 23, 27]
    testutil::checkValues(y, {6.5f, 8.5f, 12.5f, 14.5f, 11, 15, 23, 27});
  }

  TEST_CASE("ConvolutionLayer: Same mode keeps the size and pads with zeros") {
    auto conf = ConvolutionLayer::Builder(3, 3)
                    .nOut(1)
                    .activation(Activation::IDENTITY)
                    .convolutionMode(ConvolutionMode::Same)
                    .build();
    auto b =
        testutil::bind(conf, InputType::convolutional(2, 2, 1), {{0}, std::vector<float>(9, 1.0f)});
    DeviceContext ctx;
    const Tensor x = Tensor::fromVector({1, 1, 2, 2}, {1, 2, 3, 4});
    Tensor y(Shape{1, 1, 2, 2});
    b.layer->forward(ctx, x, y, testutil::mode(false));
    // Every 3x3 window centred on a pixel of a 2x2 image covers the whole image: sum = 10.
    testutil::checkValues(y, {10, 10, 10, 10});
  }

  TEST_CASE("ConvolutionLayer: stride and padding set the output size as DL4J's Truncate mode") {
    auto conf = ConvolutionLayer::Builder(3, 3, 2, 2, 1, 1).nOut(4).build();
    const InputType out = conf.resolve(0, InputType::convolutional(28, 28, 3), LayerDefaults{});
    CHECK(out.height == 14);  // (28 + 2 - 3) / 2 + 1
    CHECK(out.width == 14);
    CHECK(out.channels == 4);
    CHECK(conf.numParams() == 4 * 3 * 3 * 3 + 4);
  }
}
