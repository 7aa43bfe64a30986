#include <doctest/doctest.h>

#include "nn/layers/LayerCheckUtil.h"
#include "nn/layers/LayerTestUtil.h"

using namespace dl4cpp;

TEST_SUITE("nn/layers") {
  TEST_CASE("ZeroPaddingLayer: zeros framing each plane, and the gradient cropped back") {
    // top 1, bottom 0, left 2, right 1 around two 2x2 planes.
    auto b = testutil::bind(ZeroPaddingLayer::Builder(1, 0, 2, 1).build(),
                            InputType::convolutional(2, 2, 2), {});
    DeviceContext ctx;
    const Tensor x = Tensor::fromVector({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    Tensor y(b.layer->outputShape(x.shape()));
    REQUIRE(y.shape() == Shape{1, 2, 3, 5});
    b.layer->forward(ctx, x, y, testutil::mode(true));
    testutil::checkValues(y, {0, 0, 0, 0, 0,  //
                              0, 0, 1, 2, 0,  //
                              0, 0, 3, 4, 0,  //
                              0, 0, 0, 0, 0,  //
                              0, 0, 5, 6, 0,  //
                              0, 0, 7, 8, 0});
    std::vector<float> grad(30);
    for (size_t i = 0; i < grad.size(); ++i) grad[i] = static_cast<float>(i);
    Tensor dx(x.shape());
    b.layer->backwardInput(ctx, Tensor::fromVector(y.shape(), grad), dx);
    testutil::checkValues(dx, {7, 8, 12, 13, 22, 23, 27, 28});
  }

  TEST_CASE("ZeroPaddingLayer: DL4J's three builders, and the output type") {
    CHECK(ZeroPaddingLayer::Builder(2).build().padding == std::array<int64_t, 4>{2, 2, 2, 2});
    CHECK(ZeroPaddingLayer::Builder(1, 3).build().padding == std::array<int64_t, 4>{1, 1, 3, 3});
    CHECK(ZeroPaddingLayer::Builder(1, 2, 3, 4).build().padding ==
          std::array<int64_t, 4>{1, 2, 3, 4});
    const auto conf =
        NeuralNetConfiguration::Builder()
            .list()
            .layer(ZeroPaddingLayer::Builder(1, 2, 3, 4).build())
            .layer(OutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build())
            .setInputType(InputType::convolutionalFlat(5, 6, 3))
            .build();
    const InputType& out = conf.layerOutputTypes[0];
    CHECK(out.kind == InputType::Kind::Convolutional);
    CHECK(out.height == 5 + 1 + 2);
    CHECK(out.width == 6 + 3 + 4);
    CHECK(out.channels == 3);
    CHECK(conf.layers[0]->numParams() == 0);
  }

  TEST_CASE("ZeroPaddingLayer: negative padding and rows as input are ConfigErrors") {
    testutil::expectConfigError(
        NeuralNetConfiguration::Builder()
            .list()
            .layer(ZeroPaddingLayer::Builder(1, -1, 0, 2).name("pad").build())
            .layer(OutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build())
            .setInputType(InputType::convolutional(2, 2, 1)),
        {"layer 0 (ZeroPaddingLayer \"pad\")", "padding [top, bottom, left, right]",
         "[1, -1, 0, 2]"});
    testutil::expectConfigError(
        NeuralNetConfiguration::Builder()
            .list()
            .layer(DenseLayer::Builder().nIn(4).nOut(3).build())
            .layer(ZeroPaddingLayer::Builder(1).build())
            .layer(OutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build()),
        {"layer 1 (ZeroPaddingLayer)", "image"});
  }

  TEST_CASE("ZeroPaddingLayer: JSON round trip, and a negative padding in JSON names its path") {
    const auto conf =
        NeuralNetConfiguration::Builder()
            .list()
            .layer(ZeroPaddingLayer::Builder(1, 2, 3, 4).build())
            .layer(OutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build())
            .setInputType(InputType::convolutional(2, 2, 1))
            .build();
    const std::string json = conf.toJson();
    const auto parsed = MultiLayerConfiguration::fromJson(json);
    CHECK(parsed == conf);
    CHECK(dynamic_cast<const ZeroPaddingLayer&>(*parsed.layers[0]).padding ==
          std::array<int64_t, 4>{1, 2, 3, 4});

    const auto at = json.find("\"padding\": [");
    REQUIRE(at != std::string::npos);
    std::string bad = json;
    bad.replace(json.find('1', at), 1, "-1");
    try {
      MultiLayerConfiguration::fromJson(bad);
      FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()).find("$.layers[0].padding[0]") != std::string::npos);
    }
  }

  TEST_CASE("ZeroPaddingLayer: gradient check, failing when corrupted") {
    testutil::checkGradientsAndCorruption(ZeroPaddingLayer::Builder(1, 0, 2, 1).build(),
                                          InputType::convolutionalFlat(3, 2, 2), 12, 51);
  }
}
