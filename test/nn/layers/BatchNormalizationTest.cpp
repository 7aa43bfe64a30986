// BatchNormalization: forward values and running statistics against hand computation, for images
// and rows; gradient checks (and their failure on a wrong gradient); JSON and model files; bad
// configurations.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "LayerTestUtil.h"
#include "nn/gradientcheck/CorruptedGradientLayer.h"
#include "nn/util/ModelSerializer.h"

using namespace dl4cpp;

namespace {

// Per-channel population moments of x (N, C, S) in double.
struct ChannelMoments {
  std::vector<double> mean, variance;
};
ChannelMoments channelMoments(const std::vector<float>& x, int64_t n, int64_t c, int64_t s) {
  ChannelMoments m{std::vector<double>(size_t(c)), std::vector<double>(size_t(c))};
  for (int64_t ch = 0; ch < c; ++ch) {
    double sum = 0, squares = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < s; ++j) sum += x[size_t((i * c + ch) * s + j)];
    const double mean = sum / double(n * s);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < s; ++j) {
        const double d = x[size_t((i * c + ch) * s + j)] - mean;
        squares += d * d;
      }
    m.mean[size_t(ch)] = mean;
    m.variance[size_t(ch)] = squares / double(n * s);
  }
  return m;
}

std::vector<float> ramp(int64_t count, float scale, float offset) {
  std::vector<float> v(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    v[size_t(i)] = offset + scale * float((i * 7) % 11) + 0.1f * float(i);
  return v;
}

MultiLayerConfiguration convBnNet(const Layer& bn, uint64_t seed = 12) {
  return NeuralNetConfiguration::Builder()
      .seed(seed)
      .updater(Sgd(0.1))
      .list()
      .layer(ConvolutionLayer::Builder(3, 3).nOut(3).activation(Activation::TANH).build())
      .layer(bn)
      .layer(OutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(3)
                 .activation(Activation::SOFTMAX)
                 .build())
      .setInputType(InputType::convolutionalFlat(5, 5, 2))
      .build();
}

MultiLayerConfiguration denseBnNet(const Layer& bn) {
  return NeuralNetConfiguration::Builder()
      .seed(7)
      .updater(Sgd(0.1))
      .list()
      .layer(DenseLayer::Builder().nOut(4).activation(Activation::TANH).build())
      .layer(bn)
      .layer(OutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(3)
                 .activation(Activation::SOFTMAX)
                 .build())
      .setInputType(InputType::feedForward(5))
      .build();
}

BatchNormalization identityBn() {
  return BatchNormalization::Builder().activation(Activation::IDENTITY).build();
}

}  // namespace

TEST_SUITE("nn/layers") {
  TEST_CASE("BatchNormalization: images, training and inference forward by hand") {
    const int64_t n = 2, c = 3, s = 4;
    BatchNormalization conf = identityBn();
    conf.decay = 0.9;
    auto bound = testutil::bind(conf, InputType::convolutional(2, 2, c),
                                {{1.5f, 0.5f, 2.0f}, {0.25f, -1.0f, 0.0f}});
    Tensor state(Shape{2, c});
    state.view(c, Shape{c}).fill(1.0f);
    bound.layer->bindState({state});
    const std::vector<float> xs = ramp(n * c * s, 1.0f, -3.0f);
    const Tensor x = Tensor::fromVector({n, c, 2, 2}, xs);
    Tensor y(x.shape());
    DeviceContext ctx;
    bound.layer->forward(ctx, x, y, testutil::mode(true));

    const ChannelMoments m = channelMoments(xs, n, c, s);
    const float gamma[] = {1.5f, 0.5f, 2.0f}, beta[] = {0.25f, -1.0f, 0.0f};
    std::vector<float> expected(xs.size());
    for (int64_t i = 0; i < n * c * s; ++i) {
      const auto ch = size_t((i / s) % c);
      expected[size_t(i)] = static_cast<float>(
          gamma[ch] * (xs[size_t(i)] - m.mean[ch]) / std::sqrt(m.variance[ch] + 1e-5) + beta[ch]);
    }
    testutil::checkValues(y, expected, 1e-4f);
    // Running statistics: 0.9 * (0, 1) + 0.1 * the batch's.
    for (int64_t ch = 0; ch < c; ++ch) {
      CHECK(state.at(ch) == doctest::Approx(0.1 * m.mean[size_t(ch)]).epsilon(1e-5));
      CHECK(state.at(c + ch) == doctest::Approx(0.9 + 0.1 * m.variance[size_t(ch)]).epsilon(1e-5));
    }
    // Inference normalises with the running statistics.
    bound.layer->forward(ctx, x, y, testutil::mode(false));
    for (int64_t i = 0; i < n * c * s; ++i) {
      const int64_t ch = (i / s) % c;
      const double ref =
          gamma[ch] * (xs[size_t(i)] - state.at(ch)) / std::sqrt(state.at(c + ch) + 1e-5) +
          beta[ch];
      CHECK(y.at(i) == doctest::Approx(ref).epsilon(1e-4));
    }
  }

  TEST_CASE("BatchNormalization: rows normalise per feature, locked gamma and beta") {
    const int64_t n = 5, c = 3;
    BatchNormalization conf =
        BatchNormalization::Builder(2.0, 0.5, true).activation(Activation::IDENTITY).build();
    auto bound = testutil::bind(conf, InputType::feedForward(c), {});
    CHECK(conf.paramSpecs().empty());
    Tensor state(Shape{2, c});
    bound.layer->bindState({state});
    const std::vector<float> xs = ramp(n * c, 0.5f, 1.0f);
    const Tensor x = Tensor::fromVector({n, c}, xs);
    Tensor y(x.shape());
    DeviceContext ctx;
    bound.layer->forward(ctx, x, y, testutil::mode(true));
    const ChannelMoments m = channelMoments(xs, n, c, 1);
    for (int64_t i = 0; i < n * c; ++i) {
      const auto f = size_t(i % c);
      CHECK(
          y.at(i) ==
          doctest::Approx(2.0 * (xs[size_t(i)] - m.mean[f]) / std::sqrt(m.variance[f] + 1e-5) + 0.5)
              .epsilon(1e-4));
    }
  }

  TEST_CASE("BatchNormalization: gradient checks pass, and fail on a wrong gradient") {
    GradientCheckUtil::Options options;
    options.epsilon = 1e-2;  // normalised outputs are smooth; float32 loss rounding needs room
    options.maxRelativeError = 2e-2;
    const DataSet images = testutil::randomClassificationBatch(4, 50, 3, 5);
    for (const bool locked : {false, true}) {
      INFO("lockGammaBeta " << locked);
      BatchNormalization bn = identityBn();
      bn.lockGammaBeta = locked;
      bn.gamma = 1.3;
      MultiLayerNetwork good(convBnNet(bn));
      good.init();
      const auto passed = GradientCheckUtil::checkGradients(good, images, options);
      INFO(passed.report);
      CHECK(passed.passed);

      MultiLayerNetwork bad(convBnNet(testing::corruptGradients(bn)));
      bad.init();
      const auto failed = GradientCheckUtil::checkGradients(bad, images, options);
      CHECK_FALSE(failed.passed);
    }
    // GELU's backward pass reads the normalised values, which the layer keeps (LayerActivation);
    // RELU's is applied by the backend's batch normalisation itself.
    for (const Activation activation : {Activation::TANH, Activation::GELU, Activation::RELU}) {
      INFO("activation " << toString(activation));
      MultiLayerNetwork rows(
          denseBnNet(BatchNormalization::Builder().activation(activation).build()));
      rows.init();
      const auto result = GradientCheckUtil::checkGradients(
          rows, testutil::randomClassificationBatch(6, 5, 3, 9), options);
      INFO(result.report);
      CHECK(result.passed);
    }
  }

  TEST_CASE(
      "BatchNormalization: a RELU it applies itself trains to the bits of an ActivationLayer") {
    // The backend fuses the ReLU into the normalisation's passes (NormalizationOps.h); the model
    // must be the one a separate ActivationLayer gives, forward, backward and updates.
    const auto net = [](bool fused) {
      auto list =
          NeuralNetConfiguration::Builder()
              .seed(5)
              .updater(Sgd(0.1))
              .list()
              .layer(
                  ConvolutionLayer::Builder(3, 3).nOut(4).activation(Activation::IDENTITY).build())
              .layer(BatchNormalization::Builder()
                         .activation(fused ? Activation::RELU : Activation::IDENTITY)
                         .build());
      if (!fused) list.layer(ActivationLayer::Builder(Activation::RELU).build());
      return list
          .layer(OutputLayer::Builder(LossFunction::MCXENT)
                     .nOut(3)
                     .activation(Activation::SOFTMAX)
                     .build())
          .setInputType(InputType::convolutionalFlat(6, 6, 2))
          .build();
    };
    MultiLayerNetwork fused(net(true)), separate(net(false));
    fused.init();
    separate.init();
    REQUIRE(fused.params().toVector() == separate.params().toVector());
    const DataSet batch = testutil::randomClassificationBatch(8, 72, 3, 21);
    testutil::checkValues(fused.output(batch.features), separate.output(batch.features).toVector());
    for (int step = 0; step < 4; ++step) {
      fused.fit(batch);
      separate.fit(batch);
      CAPTURE(step);
      CHECK(fused.score() == doctest::Approx(separate.score()).epsilon(1e-5));
      testutil::checkValues(fused.params(), separate.params().toVector());
    }
    testutil::checkValues(fused.output(batch.features), separate.output(batch.features).toVector());
  }

  TEST_CASE("BatchNormalization: JSON and model files carry its fields and running statistics") {
    BatchNormalization bn = BatchNormalization::Builder().decay(0.8).eps(1e-3).build();
    bn.activation = Activation::RELU;
    const MultiLayerConfiguration conf = convBnNet(bn);
    const MultiLayerConfiguration parsed = MultiLayerConfiguration::fromJson(conf.toJson());
    const auto& read = dynamic_cast<const BatchNormalization&>(*parsed.layers[1]);
    CHECK(read.decay == 0.8);
    CHECK(read.eps == 1e-3);
    CHECK(read.nOut == 3);
    CHECK(read.numParams() == 6);
    CHECK(parsed.toJson() == conf.toJson());

    MultiLayerNetwork net(conf);
    net.init();
    net.fit(testutil::randomClassificationBatch(4, 50, 3, 2));
    const std::vector<float> state = net.layerState().toVector();
    REQUIRE(state.size() == 6);
    CHECK(state[3] != 1.0f);  // trained: the running variance moved
    const auto bytes = ModelSerializer::toBytes(net, true);
    MultiLayerNetwork restored = ModelSerializer::restoreFromBytes(bytes);
    CHECK(restored.layerState().toVector() == state);
    const Tensor probe = testutil::randomClassificationBatch(3, 50, 3, 4).features;
    CHECK(restored.output(probe).toVector() == net.output(probe).toVector());
  }

  TEST_CASE("BatchNormalization: bad configurations name the layer and the field") {
    auto message = [](BatchNormalization bn) {
      return testutil::thrownMessage<ConfigError>([&] { convBnNet(bn); });
    };
    BatchNormalization bn;
    bn.decay = 1.5;
    CHECK(message(bn).find("layer 1 (BatchNormalization): decay must be in [0, 1]") !=
          std::string::npos);
    bn = BatchNormalization();
    bn.eps = 0;
    CHECK(message(bn).find("eps must be finite and > 0") != std::string::npos);
    bn = BatchNormalization::Builder().nOut(4).build();
    CHECK(message(bn).find("nOut is 4 but the input") != std::string::npos);
  }
}
