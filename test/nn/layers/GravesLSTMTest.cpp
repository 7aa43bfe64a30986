#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "nn/conf/layers/GravesLSTM.h"
#include "nn/gradientcheck/CorruptedGradientLayer.h"
#include "nn/layers/LayerCheckUtil.h"
#include "nn/layers/LayerTestUtil.h"
#include "nn/layers/SequenceTestUtil.h"

using namespace dl4cpp;

namespace {

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

// One GravesLSTM unit (nIn 1, nOut 1) by hand, DL4J's blocks [a | f | o | i] and peepholes
// wFF, wOO, wGG: returns h_t.
struct ScalarGravesLstm {
  double w[4], rw[4], peep[3], b[4];
  double h = 0, c = 0;
  double step(double x) {
    double z[4];
    for (int k = 0; k < 4; ++k) z[k] = x * w[k] + h * rw[k] + b[k];
    const double a = std::tanh(z[0]);
    const double f = sigmoid(z[1] + c * peep[0]);
    const double i = sigmoid(z[3] + c * peep[2]);
    c = f * c + i * a;
    const double o = sigmoid(z[2] + c * peep[1]);
    h = o * std::tanh(c);
    return h;
  }
};

const std::vector<float> kW{0.1f, 0.2f, 0.3f, 0.4f}, kB{0.05f, 1.0f, -0.1f, 0.2f};
// RW: the four blocks, then wFF, wOO, wGG.
const std::vector<float> kRW{0.5f, -0.5f, 0.25f, -0.25f, 0.7f, -0.9f, 0.6f};

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
  TEST_CASE("GravesLSTM: forward by hand, peepholes from c_{t-1} into f and i, c_t into o") {
    auto b = testutil::bind(GravesLSTM::Builder().nOut(1).build(), InputType::recurrent(1),
                            {kW, kRW, kB});
    const std::vector<float> xs{0.5f, -1.0f, 2.0f};
    const Tensor y = forward(b, Tensor::fromVector({1, 1, 3}, xs), nullptr);
    ScalarGravesLstm ref{
        {0.1, 0.2, 0.3, 0.4}, {0.5, -0.5, 0.25, -0.25}, {0.7, -0.9, 0.6}, {0.05, 1.0, -0.1, 0.2}};
    std::vector<float> expected;
    for (float x : xs) expected.push_back(static_cast<float>(ref.step(x)));
    testutil::checkValues(y, expected);

    // A padded step outputs 0 and the next real step starts from a zero state.
    const Tensor mask = Tensor::fromVector({1, 3}, {1, 0, 1});
    const Tensor ym = forward(b, Tensor::fromVector({1, 1, 3}, xs), &mask);
    ScalarGravesLstm first{
        {0.1, 0.2, 0.3, 0.4}, {0.5, -0.5, 0.25, -0.25}, {0.7, -0.9, 0.6}, {0.05, 1.0, -0.1, 0.2}};
    ScalarGravesLstm fresh = first;
    testutil::checkValues(
        ym, {static_cast<float>(first.step(0.5)), 0.0f, static_cast<float>(fresh.step(2.0))});
  }

  TEST_CASE("GravesLSTM: zero peepholes give the LSTM") {
    const std::vector<float> rw4{0.5f, -0.5f, 0.25f, -0.25f};
    auto graves = testutil::bind(GravesLSTM::Builder().nOut(1).build(), InputType::recurrent(1),
                                 {kW, {0.5f, -0.5f, 0.25f, -0.25f, 0, 0, 0}, kB});
    auto lstm =
        testutil::bind(LSTM::Builder().nOut(1).build(), InputType::recurrent(1), {kW, rw4, kB});
    const Tensor x = Tensor::fromVector({1, 1, 4}, {0.3f, -0.7f, 1.1f, 0.2f});
    CHECK(forward(graves, x, nullptr).allClose(forward(lstm, x, nullptr), 1e-6f));
  }

  TEST_CASE("GravesLSTM: parameters in DL4J's layout") {
    GravesLSTM conf = GravesLSTM::Builder().nIn(3).nOut(2).build();
    conf.resolve(0, InputType::recurrent(3), LayerDefaults{});
    const auto specs = conf.paramSpecs();
    REQUIRE(specs.size() == 3);
    CHECK(specs[0].name == "W");
    CHECK(specs[0].shape == Shape{3, 8});
    CHECK(specs[1].name == "RW");
    CHECK(specs[1].shape == Shape{2, 11});
    CHECK(specs[2].name == "b");
    CHECK(specs[2].initValues == std::vector<float>{0, 0, 1, 1, 0, 0, 0, 0});
    CHECK(conf.numParams() == 3 * 8 + 2 * 11 + 8);
    CHECK((conf.resolvedActivation() == Activation::TANH));
    CHECK((conf.gateActivationFunction == Activation::SIGMOID));
  }

  TEST_CASE("GravesLSTM: gradient check, with masks, and it fails on a wrong gradient") {
    const GravesLSTM layer = GravesLSTM::Builder().nOut(4).build();
    const DataSet data = testutil::randomSequences(2, 3, 4, 3, 5);
    MultiLayerNetwork good = testutil::sequenceNetwork(layer, 3, 3);
    // Peepholes large enough that a wrong peephole gradient shows.
    Tensor params = good.params();
    const int64_t rw0 = 3 * 16;
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t k = 0; k < 3; ++k) params.data()[rw0 + j * 19 + 16 + k] = 0.5f - 0.3f * float(k);
    const auto passed = GradientCheckUtil::checkGradients(good, data);
    INFO(passed.report);
    CHECK(passed.passed);
    CHECK(passed.checked == good.numParams() + data.features.numel());

    DataSet masked = testutil::randomSequences(3, 3, 5, 3, 6);
    masked.featuresMask = Tensor::fromVector({3, 5}, {1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1});
    masked.labelsMask = masked.featuresMask.clone();
    const auto withMask = GradientCheckUtil::checkGradients(good, masked);
    INFO(withMask.report);
    CHECK(withMask.passed);

    const GravesLSTM hard =
        GravesLSTM::Builder().nOut(3).gateActivationFunction(Activation::HARDSIGMOID).build();
    MultiLayerNetwork hardNet = testutil::sequenceNetwork(hard, 3, 3);
    const auto h = GradientCheckUtil::checkGradients(hardNet, masked);
    INFO(h.report);
    CHECK(h.passed);

    MultiLayerNetwork bad = testutil::sequenceNetwork(testing::corruptGradients(layer), 3, 3);
    const auto failed = GradientCheckUtil::checkGradients(bad, data);
    CHECK_FALSE(failed.passed);
    CHECK(failed.failed >= 10);
  }

  TEST_CASE("GravesLSTM: JSON round trip keeps its fields, typed errors") {
    const MultiLayerConfiguration conf =
        NeuralNetConfiguration::Builder()
            .list()
            .layer(GravesLSTM::Builder()
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
    const auto& graves = dynamic_cast<const GravesLSTM&>(*parsed.layers[0]);
    CHECK(graves.forgetGateBiasInit == 2.5);
    CHECK((graves.gateActivationFunction == Activation::HARDSIGMOID));
    CHECK(graves.nIn == 3);

    MultiLayerNetwork net(conf);
    net.init();
    const DataSet data = testutil::randomSequences(2, 3, 7, 2, 1);
    MultiLayerNetwork restored =
        ModelSerializer::restoreFromBytes(ModelSerializer::toBytes(net, true));
    CHECK(restored.output(data.features).allClose(net.output(data.features), 1e-6f));

    testutil::expectConfigError(NeuralNetConfiguration::Builder()
                                    .list()
                                    .layer(GravesLSTM::Builder().nOut(2).build())
                                    .layer(RnnOutputLayer::Builder().nOut(2).build())
                                    .setInputType(InputType::feedForward(3)),
                                {"layer 0 (GravesLSTM)", "needs sequences"});
    testutil::expectConfigError(
        NeuralNetConfiguration::Builder()
            .list()
            .layer(GravesLSTM::Builder().nOut(2).gateActivationFunction(Activation::GELU).build())
            .layer(RnnOutputLayer::Builder().nOut(2).build())
            .setInputType(InputType::recurrent(3)),
        {"layer 0 (GravesLSTM)", "GELU"});
  }
}
