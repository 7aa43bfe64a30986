#include <doctest/doctest.h>

#include <vector>

#include "nn/conf/layers/Bidirectional.h"
#include "nn/gradientcheck/CorruptedGradientLayer.h"
#include "nn/layers/LayerCheckUtil.h"
#include "nn/layers/LayerTestUtil.h"
#include "nn/layers/SequenceTestUtil.h"

using namespace dl4cpp;

namespace {

using Mode = Bidirectional::Mode;

// A one-unit identity RNN over xs: h_t = x_t w + h_{t-1} rw + b.
std::vector<double> scalarRnn(const std::vector<double>& xs, double w, double rw, double b) {
  std::vector<double> h;
  double prev = 0;
  for (double x : xs) h.push_back(prev = x * w + prev * rw + b);
  return h;
}

const SimpleRnn kUnit = SimpleRnn::Builder().nOut(1).activation(Activation::IDENTITY).build();
// fW, fRW, fb, bW, bRW, bb.
const std::vector<std::vector<float>> kParams{{0.5f}, {0.8f}, {0.1f}, {-0.3f}, {0.6f}, {0.2f}};

Tensor forward(Mode mode, const Tensor& x, const Tensor* mask) {
  auto b = testutil::bind(Bidirectional(mode, kUnit), InputType::recurrent(1), kParams);
  DeviceContext ctx;
  Tensor y(b.layer->outputShape(x.shape()));
  ForwardContext fwd = testutil::mode(true);
  fwd.featuresMask = mask;
  b.layer->forward(ctx, x, y, fwd);
  return y;
}

double combine(Mode mode, double f, double b) {
  switch (mode) {
    case Mode::ADD:
      return f + b;
    case Mode::MUL:
      return f * b;
    default:
      return 0.5 * (f + b);
  }
}

DataSet maskedSequences(uint64_t seed) {
  DataSet data = testutil::randomSequences(3, 2, 5, 3, seed);
  // Padding at the end, at the start, none.
  data.featuresMask = Tensor::fromVector({3, 5}, {1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1});
  data.labelsMask = data.featuresMask.clone();
  return data;
}

}  // namespace

TEST_SUITE("nn/layers") {
  TEST_CASE("Bidirectional: CONCAT by hand, the backward copy over the reversed sequence") {
    const Tensor x = Tensor::fromVector({1, 1, 3}, {1, 2, 3});
    const Tensor y = forward(Mode::CONCAT, x, nullptr);
    REQUIRE(y.shape() == Shape{1, 2, 3});
    const auto f = scalarRnn({1, 2, 3}, 0.5, 0.8, 0.1);
    const auto r = scalarRnn({3, 2, 1}, -0.3, 0.6, 0.2);
    testutil::checkValues(y, {float(f[0]), float(f[1]), float(f[2]),  //
                              float(r[2]), float(r[1]), float(r[0])});
  }

  TEST_CASE("Bidirectional: each sequence reversed within its real steps") {
    // Example 0 is padded at the end, example 1 at the start (ALIGN_END).
    const Tensor x = Tensor::fromVector({2, 1, 4}, {1, 2, 3, 9, 9, 4, 5, 6});
    const Tensor mask = Tensor::fromVector({2, 4}, {1, 1, 1, 0, 0, 1, 1, 1});
    for (Mode mode : {Mode::CONCAT, Mode::ADD, Mode::MUL, Mode::AVERAGE}) {
      CAPTURE(static_cast<int>(mode));
      const Tensor y = forward(mode, x, &mask);
      const auto f0 = scalarRnn({1, 2, 3}, 0.5, 0.8, 0.1),
                 r0 = scalarRnn({3, 2, 1}, -0.3, 0.6, 0.2);
      const auto f1 = scalarRnn({4, 5, 6}, 0.5, 0.8, 0.1),
                 r1 = scalarRnn({6, 5, 4}, -0.3, 0.6, 0.2);
      // Per example: forward outputs at the real steps, backward outputs reversed back; 0 padding.
      const std::vector<double> fw[2] = {{f0[0], f0[1], f0[2], 0}, {0, f1[0], f1[1], f1[2]}};
      const std::vector<double> bw[2] = {{r0[2], r0[1], r0[0], 0}, {0, r1[2], r1[1], r1[0]}};
      std::vector<float> expected;
      for (int e = 0; e < 2; ++e) {
        if (mode == Mode::CONCAT) {
          for (double v : fw[e]) expected.push_back(float(v));
          for (double v : bw[e]) expected.push_back(float(v));
        } else {
          for (int s = 0; s < 4; ++s) expected.push_back(float(combine(mode, fw[e][s], bw[e][s])));
        }
      }
      testutil::checkValues(y, expected);
    }
  }

  TEST_CASE("Bidirectional: parameters fW, fRW, fb, bW, bRW, bb, output size by mode") {
    Bidirectional conf(LSTM::Builder().nOut(4).build());
    CHECK((conf.mode == Mode::CONCAT));
    CHECK(conf.resolve(0, InputType::recurrent(3, 6), LayerDefaults{}).toString() ==
          "Recurrent(8, 6)");
    const auto specs = conf.paramSpecs();
    REQUIRE(specs.size() == 6);
    const char* names[] = {"fW", "fRW", "fb", "bW", "bRW", "bb"};
    for (size_t i = 0; i < 6; ++i) CHECK(specs[i].name == names[i]);
    CHECK(specs[3].shape == Shape{3, 16});
    CHECK(conf.numParams() == 2 * (3 * 16 + 4 * 16 + 16));
    Bidirectional add = Bidirectional::Builder()
                            .rnnLayer(SimpleRnn::Builder().nOut(4).build())
                            .mode(Mode::ADD)
                            .build();
    CHECK(add.resolve(0, InputType::recurrent(3), LayerDefaults{}).toString() == "Recurrent(4)");

    // The two copies start from different draws.
    MultiLayerNetwork net = testutil::sequenceNetwork(conf, 3, 2);
    const std::vector<float> p = net.params().toVector();
    const int64_t half = conf.numParams() / 2;
    bool differ = false;
    for (int64_t i = 0; i < 3 * 16; ++i) differ |= p[size_t(i)] != p[size_t(half + i)];
    CHECK(differ);
  }

  TEST_CASE("Bidirectional: gradient check in every mode, with masks, and it fails when wrong") {
    const DataSet plain = testutil::randomSequences(2, 2, 4, 3, 3);
    const DataSet masked = maskedSequences(4);
    for (Mode mode : {Mode::CONCAT, Mode::ADD, Mode::MUL, Mode::AVERAGE}) {
      CAPTURE(static_cast<int>(mode));
      const Bidirectional layer(mode, LSTM::Builder().nOut(3).build());
      MultiLayerNetwork net = testutil::sequenceNetwork(layer, 2, 3);
      const auto a = GradientCheckUtil::checkGradients(net, plain);
      INFO(a.report);
      CHECK(a.passed);
      CHECK(a.checked == net.numParams() + plain.features.numel());
      const auto b = GradientCheckUtil::checkGradients(net, masked);
      INFO(b.report);
      CHECK(b.passed);
    }
    const Bidirectional rnn(Mode::MUL, SimpleRnn::Builder().nOut(3).build());
    MultiLayerNetwork good = testutil::sequenceNetwork(rnn, 2, 3);
    const auto r = GradientCheckUtil::checkGradients(good, masked);
    INFO(r.report);
    CHECK(r.passed);
    MultiLayerNetwork bad = testutil::sequenceNetwork(testing::corruptGradients(rnn), 2, 3);
    const auto failed = GradientCheckUtil::checkGradients(bad, masked);
    CHECK_FALSE(failed.passed);
    CHECK(failed.failed >= 10);
  }

  TEST_CASE("Bidirectional: a padded batch scores and answers as its sequences one at a time") {
    for (int64_t shortFrom : {0, 2}) {
      CAPTURE(shortFrom);
      DataSet batch = testutil::randomSequences(2, 2, 5, 3, 17);
      std::vector<float> mask{0, 0, 0, 0, 0, 1, 1, 1, 1, 1};
      for (int64_t s = shortFrom; s < shortFrom + 3; ++s) mask[size_t(s)] = 1;
      batch.featuresMask = Tensor::fromVector({2, 5}, mask);
      batch.labelsMask = batch.featuresMask.clone();
      for (int64_t k = 0; k < 2; ++k)
        for (int64_t s = 0; s < 5; ++s)
          if (mask[size_t(s)] == 0) batch.features.data()[k * 5 + s] = 7.0f;
      auto slice = [&](const Tensor& t, int64_t e, int64_t from, int64_t length) {
        const int64_t c = t.dim(1);
        std::vector<float> v;
        for (int64_t k = 0; k < c; ++k)
          for (int64_t s = from; s < from + length; ++s) v.push_back(t.at((e * c + k) * 5 + s));
        return Tensor::fromVector({1, c, length}, v);
      };
      const DataSet a{slice(batch.features, 0, shortFrom, 3), slice(batch.labels, 0, shortFrom, 3)};
      const DataSet b{slice(batch.features, 1, 0, 5), slice(batch.labels, 1, 0, 5)};
      MultiLayerNetwork net =
          testutil::sequenceNetwork(Bidirectional(LSTM::Builder().nOut(3).build()), 2, 3);
      CHECK(net.score(batch) == doctest::Approx((net.score(a) + net.score(b)) / 2).epsilon(1e-5));
      const Tensor out = net.output(batch.features, false, batch.featuresMask);
      const Tensor outA = net.output(a.features);
      for (int64_t c = 0; c < 3; ++c)
        for (int64_t s = 0; s < 3; ++s)
          CHECK(out.at(c * 5 + shortFrom + s) == doctest::Approx(outA.at(c * 3 + s)).epsilon(1e-5));
    }
  }

  TEST_CASE("Bidirectional: JSON and model-file round trip, typed errors") {
    const MultiLayerConfiguration conf =
        NeuralNetConfiguration::Builder()
            .list()
            .layer(Bidirectional(Mode::AVERAGE,
                                 LSTM::Builder().nOut(4).l2(0.01).updater(Sgd(0.5)).build()))
            .layer(RnnOutputLayer::Builder(LossFunction::MSE)
                       .nOut(2)
                       .activation(Activation::IDENTITY)
                       .build())
            .setInputType(InputType::recurrent(3))
            .build();
    const MultiLayerConfiguration parsed = MultiLayerConfiguration::fromJson(conf.toJson());
    CHECK(parsed.toJson() == conf.toJson());
    const auto& bi = dynamic_cast<const Bidirectional&>(*parsed.layers[0]);
    CHECK((bi.mode == Mode::AVERAGE));
    CHECK(bi.forwardLayer()->typeName() == "LSTM");
    CHECK(bi.backwardLayer()->typeName() == "LSTM");
    CHECK(*bi.l2 == 0.01);  // the wrapped layer's, adopted
    CHECK(parsed.layerOutputTypes[0].toString() == "Recurrent(4)");

    MultiLayerNetwork net(conf);
    net.init();
    const DataSet data = testutil::randomSequences(2, 3, 4, 2, 1);
    MultiLayerNetwork restored =
        ModelSerializer::restoreFromBytes(ModelSerializer::toBytes(net, true));
    CHECK(restored.output(data.features).allClose(net.output(data.features), 1e-6f));

    testutil::expectConfigError(NeuralNetConfiguration::Builder()
                                    .list()
                                    .layer(Bidirectional(DenseLayer::Builder().nOut(4).build()))
                                    .layer(RnnOutputLayer::Builder().nOut(2).build())
                                    .setInputType(InputType::recurrent(3)),
                                {"layer 0 (Bidirectional)", "DenseLayer"});
    testutil::expectConfigError(NeuralNetConfiguration::Builder()
                                    .list()
                                    .layer(Bidirectional(LSTM::Builder().nOut(4).build()))
                                    .layer(RnnOutputLayer::Builder().nOut(2).build())
                                    .setInputType(InputType::feedForward(3)),
                                {"layer 0 (Bidirectional)", "needs sequences"});
    CHECK_THROWS_AS(Bidirectional::Builder().build(), ConfigError);
  }
}
