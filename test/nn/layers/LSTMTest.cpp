#include <doctest/doctest.h>

#include <cmath>

#include "nn/gradientcheck/CorruptedGradientLayer.h"
#include "nn/layers/LayerCheckUtil.h"
#include "nn/layers/LayerTestUtil.h"
#include "nn/layers/SequenceTestUtil.h"

using namespace dl4cpp;

namespace {

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// One LSTM unit (nIn 1, nOut 1) by hand, DL4J's blocks [a | f | o | i]: returns h_t.
struct ScalarLstm {
  double w[4], rw[4], b[4];
  double h = 0, c = 0;
  double step(double x) {
    double z[4];
    for (int k = 0; k < 4; ++k) z[k] = x * w[k] + h * rw[k] + b[k];
    const double a = std::tanh(z[0]), f = sigmoid(z[1]), o = sigmoid(z[2]), i = sigmoid(z[3]);
    c = f * c + i * a;
    h = o * std::tanh(c);
    return h;
  }
};

const std::vector<float> kW{0.1f, 0.2f, 0.3f, 0.4f}, kRW{0.5f, -0.5f, 0.25f, -0.25f},
    kB{0.05f, 1.0f, -0.1f, 0.2f};

testutil::BoundLayer unitLstm() {
  return testutil::bind(LSTM::Builder().nOut(1).build(), InputType::recurrent(1), {kW, kRW, kB});
}

Tensor forward(testutil::BoundLayer& b, const Tensor& x, const Tensor* mask) {
  DeviceContext ctx;
  Tensor y(b.layer->outputShape(x.shape()));
  ForwardContext fwd = testutil::mode(true);
  fwd.featuresMask = mask;
  b.layer->forward(ctx, x, y, fwd);
  return y;
}

}  // namespace

TEST_SUITE("nn/layers") {
  TEST_CASE("LSTM: forward by hand over three steps, DL4J's gate order") {
    auto b = unitLstm();
    const std::vector<float> xs{0.5f, -1.0f, 2.0f};
    const Tensor y = forward(b, Tensor::fromVector({1, 1, 3}, xs), nullptr);
    ScalarLstm ref{{0.1, 0.2, 0.3, 0.4}, {0.5, -0.5, 0.25, -0.25}, {0.05, 1.0, -0.1, 0.2}};
    std::vector<float> expected;
    for (float x : xs) expected.push_back(static_cast<float>(ref.step(x)));
    testutil::checkValues(y, expected);
  }

  TEST_CASE("LSTM: a padded step outputs 0 and the next real step starts afresh") {
    auto b = unitLstm();
    const Tensor x = Tensor::fromVector({1, 1, 3}, {0.5f, -1.0f, 2.0f});
    const Tensor mask = Tensor::fromVector({1, 3}, {1, 0, 1});
    const Tensor y = forward(b, x, &mask);
    ScalarLstm first{{0.1, 0.2, 0.3, 0.4}, {0.5, -0.5, 0.25, -0.25}, {0.05, 1.0, -0.1, 0.2}};
    ScalarLstm fresh = first;
    testutil::checkValues(
        y, {static_cast<float>(first.step(0.5)), 0.0f, static_cast<float>(fresh.step(2.0))});
  }

  TEST_CASE("LSTM: parameters in DL4J's layout, forget gate bias 1 by default") {
    LSTM conf = LSTM::Builder().nIn(3).nOut(2).build();
    conf.resolve(0, InputType::recurrent(3), LayerDefaults{});
    const auto specs = conf.paramSpecs();
    REQUIRE(specs.size() == 3);
    CHECK(specs[0].name == "W");
    CHECK(specs[0].shape == Shape{3, 8});
    CHECK(specs[1].name == "RW");
    CHECK(specs[1].shape == Shape{2, 8});
    CHECK(specs[2].name == "b");
    CHECK(specs[2].initValues == std::vector<float>{0, 0, 1, 1, 0, 0, 0, 0});
    CHECK(conf.numParams() == 3 * 8 + 2 * 8 + 8);
    CHECK((conf.resolvedActivation() == Activation::TANH));
    CHECK((conf.gateActivationFunction == Activation::SIGMOID));
  }

  TEST_CASE("LSTM: gradient check, and it fails on a wrong gradient") {
    const LSTM lstm = LSTM::Builder().nOut(4).build();
    const DataSet data = testutil::randomSequences(2, 3, 4, 3, 5);
    MultiLayerNetwork good = testutil::sequenceNetwork(lstm, 3, 3);
    const auto passed = GradientCheckUtil::checkGradients(good, data);
    INFO(passed.report);
    CHECK(passed.passed);
    CHECK(passed.checked == good.numParams() + data.features.numel());

    MultiLayerNetwork bad = testutil::sequenceNetwork(testing::corruptGradients(lstm), 3, 3);
    const auto failed = GradientCheckUtil::checkGradients(bad, data);
    CHECK_FALSE(failed.passed);
    CHECK(failed.failed >= 10);
  }

  TEST_CASE("LSTM: gradient check with HARDSIGMOID gates and padded sequences") {
    const LSTM lstm =
        LSTM::Builder().nOut(3).gateActivationFunction(Activation::HARDSIGMOID).build();
    DataSet data = testutil::randomSequences(2, 2, 5, 2, 9);
    data.featuresMask = Tensor::fromVector({2, 5}, {1, 1, 1, 0, 0, 0, 1, 1, 1, 1});
    data.labelsMask = data.featuresMask.clone();
    MultiLayerNetwork net = testutil::sequenceNetwork(lstm, 2, 2);
    const auto r = GradientCheckUtil::checkGradients(net, data);
    INFO(r.report);
    CHECK(r.passed);
  }

  TEST_CASE("LSTM: JSON round trip keeps its fields") {
    const MultiLayerConfiguration conf =
        NeuralNetConfiguration::Builder()
            .list()
            .layer(LSTM::Builder()
                       .nOut(5)
                       .forgetGateBiasInit(2.5)
                       .gateActivationFunction(Activation::HARDSIGMOID)
                       .build())
            .layer(RnnOutputLayer::Builder(LossFunction::MSE)
                       .nOut(2)
                       .activation(Activation::IDENTITY)
                       .build())
            .setInputType(InputType::recurrent(3, 7))
            .build();
    const MultiLayerConfiguration parsed = MultiLayerConfiguration::fromJson(conf.toJson());
    CHECK(parsed.toJson() == conf.toJson());
    const auto& lstm = dynamic_cast<const LSTM&>(*parsed.layers[0]);
    CHECK(lstm.forgetGateBiasInit == 2.5);
    CHECK((lstm.gateActivationFunction == Activation::HARDSIGMOID));
    CHECK(lstm.nIn == 3);
    CHECK(parsed.inputType.kind == InputType::Kind::Recurrent);
    CHECK(parsed.inputType.length == 7);
    CHECK(parsed.layerOutputTypes[1].toString() == "Recurrent(2, 7)");
  }

  TEST_CASE("LSTM: typed errors for feed-forward input and unsupported activations") {
    testutil::expectConfigError(NeuralNetConfiguration::Builder()
                                    .list()
                                    .layer(LSTM::Builder().nOut(2).build())
                                    .layer(RnnOutputLayer::Builder().nOut(2).build())
                                    .setInputType(InputType::feedForward(3)),
                                {"layer 0 (LSTM)", "needs sequences", "FeedForward(3)"});
    testutil::expectConfigError(
        NeuralNetConfiguration::Builder()
            .list()
            .layer(LSTM::Builder().nOut(2).build())
            .layer(OutputLayer::Builder().nOut(2).build())
            .setInputType(InputType::recurrent(3)),
        {"layer 1 (OutputLayer)", "one output per time step", "LastTimeStep"});
    testutil::expectConfigError(
        NeuralNetConfiguration::Builder()
            .list()
            .layer(LSTM::Builder().nOut(2).activation(Activation::GELU).build())
            .layer(RnnOutputLayer::Builder().nOut(2).build())
            .setInputType(InputType::recurrent(3)),
        {"layer 0 (LSTM)", "GELU"});
  }
}
