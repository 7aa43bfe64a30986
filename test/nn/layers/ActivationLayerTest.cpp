#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "TempDir.h"
#include "nn/layers/LayerTestUtil.h"
#include "nn/layers/SequenceTestUtil.h"

using namespace dl4cpp;

namespace {

MultiLayerConfiguration withActivationLayer(const InputType& input, Activation activation) {
  return NeuralNetConfiguration::Builder()
      .seed(4)
      .list()
      .layer(ActivationLayer::Builder().activation(activation).name("act").build())
      .layer(
          OutputLayer::Builder(LossFunction::MSE).nOut(2).activation(Activation::IDENTITY).build())
      .setInputType(input)
      .build();
}

}  // namespace

TEST_SUITE("nn/layers") {
  TEST_CASE("ActivationLayer: y = f(x) element-wise, and backward dL/dx = f'(x) dL/dy") {
    auto b = testutil::bind(ActivationLayer::Builder().activation(Activation::ELU).build(),
                            InputType::feedForward(3), {});
    DeviceContext ctx;
    const Tensor x = Tensor::fromVector({2, 3}, {-2, -0.5f, 0, 0.25f, 1, 3});
    Tensor y(Shape{2, 3});
    b.layer->forward(ctx, x, y, testutil::mode(true));
    // ELU with DL4J's alpha 1: x > 0 ? x : e^x - 1.
    testutil::checkValues(y, {std::expm1(-2.0f), std::expm1(-0.5f), 0, 0.25f, 1, 3});
    CHECK(x.toVector() == std::vector<float>{-2, -0.5f, 0, 0.25f, 1, 3});  // the input is kept

    // The network's order; backwardActivation leaves dy alone (all is done in backwardInput).
    Tensor dy = Tensor::fromVector({2, 3}, {1, 2, 3, 4, 5, 6}), dx(Shape{2, 3});
    b.layer->backwardActivation(ctx, y, dy);
    b.layer->backwardParams(ctx, x, dy);
    b.layer->backwardInput(ctx, dy, dx);
    testutil::checkValues(dx, {std::exp(-2.0f), 2 * std::exp(-0.5f), 3, 4, 5, 6});
  }

  TEST_CASE("ActivationLayer: an activation that reads its input refers to it in backward") {
    auto b = testutil::bind(ActivationLayer::Builder(Activation::SWISH).build(),
                            InputType::feedForward(2), {});
    DeviceContext ctx;
    const Tensor x = Tensor::fromVector({1, 2}, {-1.5f, 2});
    Tensor y(Shape{1, 2}), dx(Shape{1, 2});
    const Tensor dy = Tensor::fromVector({1, 2}, {1, 1});
    auto sigmoid = [](float v) { return 1 / (1 + std::exp(-v)); };
    auto slope = [&](float v) { return sigmoid(v) + v * sigmoid(v) * (1 - sigmoid(v)); };
    b.layer->forward(ctx, x, y, testutil::mode(true));
    testutil::checkValues(y, {-1.5f * sigmoid(-1.5f), 2 * sigmoid(2)});
    b.layer->backwardInput(ctx, dy, dx);
    testutil::checkValues(dx, {slope(-1.5f), slope(2)});

    // An inference pass keeps nothing: a backward pass after it is an error, not a wrong answer.
    b.layer->forward(ctx, x, y, testutil::mode(false));
    CHECK_THROWS_AS(b.layer->backwardInput(ctx, dy, dx), BackendError);
  }

  TEST_CASE("ActivationLayer: rows and images pass through unreshaped, as its output type") {
    for (const InputType& input : {InputType::feedForward(6), InputType::convolutional(2, 3, 4)}) {
      CAPTURE(input.toString());
      const MultiLayerConfiguration conf = withActivationLayer(input, Activation::RELU6);
      CHECK((conf.preProcessors[0] == InputPreProcessor::None));
      CHECK(conf.layerInputTypes[0].toString() == input.toString());
      CHECK(conf.layerOutputTypes[0].toString() == input.toString());
      CHECK(conf.layers[0]->numParams() == 0);
    }
    // Flattened images arrive as images (as at batch normalisation and dropout).
    const MultiLayerConfiguration conf =
        withActivationLayer(InputType::convolutionalFlat(4, 4, 1), Activation::HARDTANH);
    CHECK((conf.preProcessors[0] == InputPreProcessor::FeedForwardToCnn));
    CHECK(conf.layerOutputTypes[0].toString() == InputType::convolutional(4, 4, 1).toString());
  }

  TEST_CASE("ActivationLayer: the network's default activation, and every activation on images") {
    const MultiLayerConfiguration conf =
        NeuralNetConfiguration::Builder()
            .activation(Activation::SOFTPLUS)
            .list()
            .layer(ActivationLayer::Builder().build())
            .layer(OutputLayer::Builder(LossFunction::MSE).nOut(2).build())
            .setInputType(InputType::feedForward(3))
            .build();
    CHECK((conf.layers[0]->resolvedActivation() == Activation::SOFTPLUS));

    // On (N, C, H, W): element-wise everywhere, SOFTMAX over the channels of each position.
    for (const auto& [activation, name] : kActivationNames) {
      const std::string kindName = name;
      CAPTURE(kindName);
      auto b = testutil::bind(ActivationLayer::Builder(activation).build(),
                              InputType::convolutional(2, 2, 3), {});
      DeviceContext ctx;
      Tensor x(Shape{2, 3, 2, 2});
      for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] = 0.37f * float(i % 11) - 1.8f;
      Tensor y(x.shape()), expected = x.clone();
      b.layer->forward(ctx, x, y, testutil::mode(false));
      ctx.backend().activationForward(activation, 0.01f, expected, expected);
      CHECK(y.toVector() == expected.toVector());
    }
  }

  TEST_CASE("ActivationLayer: on sequences, per step, and through the gradient check") {
    for (Activation a : {Activation::LOGSOFTMAX, Activation::SOFTMAX, Activation::TANH}) {
      INFO(toString(a));
      MultiLayerNetwork net(NeuralNetConfiguration::Builder()
                                .seed(6)
                                .list()
                                .layer(LSTM::Builder().nOut(4).build())
                                .layer(ActivationLayer::Builder(a).build())
                                .layer(RnnOutputLayer::Builder(LossFunction::MCXENT)
                                           .nOut(3)
                                           .activation(Activation::SOFTMAX)
                                           .build())
                                .setInputType(InputType::recurrent(2))
                                .build());
      net.init();
      CHECK(net.getConfiguration().layerOutputTypes[1].kind == InputType::Kind::Recurrent);
      DataSet data = testutil::randomSequences(3, 2, 5, 3, 7);
      const auto result = GradientCheckUtil::checkGradients(net, data);
      INFO(result.report);
      CHECK(result.passed);
    }
  }

  TEST_CASE("ActivationLayer: JSON and model-file round trips, registry, bad activation name") {
    const MultiLayerConfiguration conf =
        withActivationLayer(InputType::convolutional(2, 2, 1), Activation::GELU);
    const std::string json = conf.toJson();
    CHECK(json.find("\"type\": \"ActivationLayer\"") != std::string::npos);
    CHECK(json.find("\"activation\": \"GELU\"") != std::string::npos);
    const MultiLayerConfiguration parsed = MultiLayerConfiguration::fromJson(json);
    CHECK(parsed == conf);
    CHECK(parsed.layers[0]->typeName() == "ActivationLayer");

    MultiLayerNetwork net(conf);
    net.init();
    testutil::TempDir dir;
    net.save(dir.path() / "activation.dl4cpp");
    MultiLayerNetwork loaded = MultiLayerNetwork::load(dir.path() / "activation.dl4cpp");
    CHECK(loaded.getConfiguration() == conf);
    Tensor x(Shape{3, 1, 2, 2});
    for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] = 0.5f * float(i) - 2;
    CHECK(loaded.output(x).toVector() == net.output(x).toVector());

    const auto at = json.find("\"GELU\"");
    REQUIRE(at != std::string::npos);
    const std::string bad = json.substr(0, at) + "\"GELUU\"" + json.substr(at + 6);
    try {
      MultiLayerConfiguration::fromJson(bad);
      FAIL("an unknown activation was accepted");
    } catch (const ConfigError& e) {
      const std::string message = e.what();
      CHECK(message.find("$.layers[0].activation") != std::string::npos);
      CHECK(message.find("unknown value \"GELUU\"") != std::string::npos);
    }
  }
}
