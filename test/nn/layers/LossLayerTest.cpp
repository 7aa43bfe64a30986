#include <doctest/doctest.h>

#include <cmath>

#include "nn/gradientcheck/CorruptedGradientLayer.h"
#include "nn/layers/LayerCheckUtil.h"
#include "nn/layers/LayerTestUtil.h"
#include "nn/layers/LossOutputRuntime.h"

using namespace dl4cpp;

namespace {

// rows (n, 4) -> dense TANH (5) -> `loss`
MultiLayerConfiguration denseThen(const Layer& loss, uint64_t seed = 3) {
  return NeuralNetConfiguration::Builder()
      .seed(seed)
      .list()
      .layer(DenseLayer::Builder().nIn(4).nOut(5).activation(Activation::TANH).build())
      .layer(loss)
      .build();
}

DataSet rowsWithLabels(LossFunction loss, uint64_t seed) {
  Random random(seed);
  Tensor features(Shape{3, 4}), labels(Shape{3, 5});
  for (int64_t i = 0; i < features.numel(); ++i)
    features.data()[i] = static_cast<float>(random.uniform(-1, 1));
  const bool oneHot = loss == LossFunction::MCXENT || loss == LossFunction::NEGATIVELOGLIKELIHOOD ||
                      loss == LossFunction::KL_DIVERGENCE;
  const bool signs = loss == LossFunction::HINGE || loss == LossFunction::SQUARED_HINGE;
  // |y - l| has a kink at y = l: labels beyond every output (the dense layer's tanh) keep the
  // check's steps off it.
  const bool absolute = loss == LossFunction::MEAN_ABSOLUTE_ERROR || loss == LossFunction::L1;
  for (int64_t r = 0; r < 3; ++r) {
    if (oneHot) {
      labels.data()[r * 5 + static_cast<int64_t>(random.nextU64() % 5)] = 1;
    } else {
      for (int64_t c = 0; c < 5; ++c)
        labels.data()[r * 5 + c] = signs      ? (random.nextDouble() < 0.5 ? -1.0f : 1.0f)
                                   : absolute ? static_cast<float>(random.uniform(1.1, 2.0))
                                              : static_cast<float>(random.uniform(0.05, 0.95));
    }
  }
  return {features, labels};
}

}  // namespace

TEST_SUITE("nn/layers") {
  TEST_CASE("LossLayer: output = activation(input), score and gradient of the loss on it") {
    // softmax + MCXENT over (2, 3) inputs, by hand: p = softmax(z), loss = -sum l log p,
    // dL/dz = p - l (one-hot labels).
    auto b = testutil::bind(
        LossLayer::Builder(LossFunction::MCXENT).activation(Activation::SOFTMAX).build(),
        InputType::feedForward(3), {});
    REQUIRE(b.layer->asLossOutput() != nullptr);
    layers::LossOutputRuntime& loss = *b.layer->asLossOutput();
    DeviceContext ctx;
    const std::vector<float> z{1, 2, 3, 0.5f, -1, 0};
    const Tensor x = Tensor::fromVector({2, 3}, z);
    const Tensor labels = Tensor::fromVector({2, 3}, {0, 0, 1, 1, 0, 0});
    Tensor y(Shape{2, 3}), dz(Shape{2, 3}), dx(Shape{2, 3});
    b.layer->forward(ctx, x, y, testutil::mode(true));
    std::vector<float> p(6);
    double expectedLoss = 0;
    for (int r = 0; r < 2; ++r) {
      double sum = 0;
      for (int c = 0; c < 3; ++c) sum += std::exp(double(z[r * 3 + c]));
      for (int c = 0; c < 3; ++c)
        p[r * 3 + c] = static_cast<float>(std::exp(double(z[r * 3 + c])) / sum);
    }
    expectedLoss = -std::log(double(p[2])) - std::log(double(p[3]));
    testutil::checkValues(y, p);
    CHECK(loss.lossScore(ctx, y, labels) == doctest::Approx(expectedLoss).epsilon(1e-5));
    CHECK(loss.lossGradient(ctx, y, labels, dz) == doctest::Approx(expectedLoss).epsilon(1e-5));
    testutil::checkValues(dz, {p[0], p[1], p[2] - 1, p[3] - 1, p[4], p[5]});
    b.layer->backwardInput(ctx, dz, dx);
    testutil::checkValues(dx, dz.toVector());
    CHECK(x.toVector() == z);  // the input is left as it was
  }

  TEST_CASE("LossLayer: DL4J's builder defaults (IDENTITY, MCXENT) and sizes from the input") {
    const LossLayer conf = LossLayer::Builder().build();
    CHECK((conf.activation == Activation::IDENTITY));  // not the network's default
    CHECK((conf.lossFunction == LossFunction::MCXENT));
    const auto net = NeuralNetConfiguration::Builder()
                         .list()
                         .layer(ConvolutionLayer::Builder(2, 2).nOut(3).build())
                         .layer(LossLayer::Builder(LossFunction::MSE).build())
                         .setInputType(InputType::convolutional(3, 3, 1))
                         .build();
    CHECK(net.outputType.kind == InputType::Kind::FeedForward);
    CHECK(net.outputType.size == 2 * 2 * 3);  // images flattened, as into a dense layer
    CHECK((net.preProcessors[1] == InputPreProcessor::CnnToFeedForward));
    CHECK(net.layers[1]->numParams() == 0);
  }

  TEST_CASE("LossLayer: not last, no loss layer, and a loss its activation cannot feed") {
    testutil::expectConfigError(NeuralNetConfiguration::Builder()
                                    .list()
                                    .layer(LossLayer::Builder(LossFunction::MSE).build())
                                    .layer(OutputLayer::Builder(LossFunction::MSE).nOut(2).build())
                                    .setInputType(InputType::feedForward(3)),
                                {"layer 0 (LossLayer)", "must be the last layer"});
    testutil::expectConfigError(
        NeuralNetConfiguration::Builder()
            .list()
            .layer(ConvolutionLayer::Builder(2, 2).nOut(3).build())
            .layer(GlobalPoolingLayer::Builder().build())
            .setInputType(InputType::convolutional(3, 3, 1)),
        {"layer 1 (GlobalPoolingLayer)", "the last layer must compute the loss", "LossLayer"});
    testutil::expectConfigError(
        NeuralNetConfiguration::Builder()
            .list()
            .layer(LossLayer::Builder(LossFunction::NEGATIVELOGLIKELIHOOD).build())
            .setInputType(InputType::feedForward(3)),
        {"layer 0 (LossLayer)", "NEGATIVELOGLIKELIHOOD needs probabilities", "IDENTITY"});
    testutil::expectConfigError(
        NeuralNetConfiguration::Builder()
            .list()
            .layer(LossLayer::Builder(LossFunction::XENT).activation(Activation::TANH).build())
            .setInputType(InputType::feedForward(3)),
        {"layer 0 (LossLayer)", "XENT", "TANH"});
  }

  TEST_CASE("LossLayer: a user's layer type that declares a loss must compute one at init") {
    // The configuration says LossOutput, the runtime object does not derive LossOutputRuntime.
    class Pretender : public dl4cpp::LossLayer {
     public:
      std::shared_ptr<Layer> clone() const override { return std::make_shared<Pretender>(*this); }
      std::unique_ptr<layers::RuntimeLayer> instantiate() const override {
        return GlobalPoolingLayer().instantiate();
      }
    };
    Pretender pretender;
    pretender.lossFunction = LossFunction::MSE;
    pretender.activation = Activation::IDENTITY;
    MultiLayerNetwork net(NeuralNetConfiguration::Builder()
                              .list()
                              .layer(pretender)
                              .setInputType(InputType::feedForward(2))
                              .build());
    try {
      net.init();
      FAIL("expected a ConfigError");
    } catch (const ConfigError& e) {
      CHECK(std::string(e.what()).find("does not compute a loss") != std::string::npos);
    }
  }

  TEST_CASE("LossLayer: JSON round trip") {
    const auto conf = denseThen(LossLayer::Builder(LossFunction::XENT)
                                    .activation(Activation::SIGMOID)
                                    .name("loss")
                                    .build());
    const std::string json = conf.toJson();
    CHECK(json.find("\"lossFunction\": \"XENT\"") != std::string::npos);
    const auto parsed = MultiLayerConfiguration::fromJson(json);
    CHECK(parsed == conf);
    const auto& layer = dynamic_cast<const LossLayer&>(*parsed.layers[1]);
    CHECK((layer.lossFunction == LossFunction::XENT));
    CHECK((layer.activation == Activation::SIGMOID));
    CHECK(layer.name == "loss");
  }

  TEST_CASE("LossLayer: gradient check with every loss, failing when corrupted") {
    struct Case {
      LossFunction loss;
      Activation activation;
    };
    for (const Case& c :
         {Case{LossFunction::MCXENT, Activation::SOFTMAX},
          Case{LossFunction::NEGATIVELOGLIKELIHOOD, Activation::SOFTMAX},
          Case{LossFunction::MSE, Activation::IDENTITY}, Case{LossFunction::MSE, Activation::TANH},
          Case{LossFunction::XENT, Activation::SIGMOID},
          Case{LossFunction::MSE, Activation::GELU},  // its backward pass reads the kept input
          Case{LossFunction::MEAN_ABSOLUTE_ERROR, Activation::IDENTITY},
          Case{LossFunction::L1, Activation::TANH}, Case{LossFunction::L2, Activation::SWISH},
          Case{LossFunction::HINGE, Activation::IDENTITY},
          Case{LossFunction::SQUARED_HINGE, Activation::TANH},
          Case{LossFunction::KL_DIVERGENCE, Activation::SOFTMAX}}) {
      CAPTURE(toString(c.loss));
      CAPTURE(toString(c.activation));
      const auto lossLayer = LossLayer::Builder(c.loss).activation(c.activation).build();
      const DataSet data = rowsWithLabels(c.loss, 61);
      MultiLayerNetwork good(denseThen(lossLayer));
      good.init();
      const auto passed = GradientCheckUtil::checkGradients(good, data);
      INFO(passed.report);
      CHECK(passed.passed);
      CHECK(passed.checked == good.numParams() + data.features.numel());

      MultiLayerNetwork bad(denseThen(testing::corruptLossGradients(lossLayer)));
      bad.init();
      const auto failed = GradientCheckUtil::checkGradients(bad, data);
      CHECK_FALSE(failed.passed);
      CHECK(failed.failed >= 20);  // of the dense layer's 25 parameters and 12 inputs
    }
  }
}
