#include <doctest/doctest.h>

#include <vector>

#include "nn/conf/layers/LastTimeStep.h"
#include "nn/gradientcheck/CorruptedGradientLayer.h"
#include "nn/layers/LayerCheckUtil.h"
#include "nn/layers/LayerTestUtil.h"
#include "nn/layers/SequenceTestUtil.h"

using namespace dl4cpp;

namespace {

Tensor forward(testutil::BoundLayer& b, const Tensor& x, const Tensor* mask) {
  DeviceContext ctx;
  Tensor y(b.layer->outputShape(x.shape()));
  ForwardContext fwd = testutil::mode(true);
  fwd.featuresMask = mask;
  b.layer->forward(ctx, x, y, fwd);
  return y;
}

// `recurrent` -> LastTimeStep -> OutputLayer (softmax, MCXENT, 3 classes) on 3 features.
MultiLayerNetwork lastStepNetwork(const Layer& wrapped) {
  MultiLayerNetwork net(NeuralNetConfiguration::Builder()
                            .seed(6)
                            .list()
                            .layer(wrapped)
                            .layer(OutputLayer::Builder(LossFunction::MCXENT)
                                       .nOut(3)
                                       .activation(Activation::SOFTMAX)
                                       .build())
                            .setInputType(InputType::recurrent(3))
                            .build());
  net.init();
  return net;
}

// Sequences (n, 3, steps) with one label (n, 3) each.
DataSet lastStepData(int64_t n, int64_t steps, uint64_t seed) {
  const DataSet seq = testutil::randomSequences(n, 3, steps, 3, seed);
  Tensor labels(Shape{n, 3});
  labels.fill(0.0f);
  for (int64_t e = 0; e < n; ++e) labels.data()[e * 3 + (e % 3)] = 1.0f;
  return {seq.features, labels};
}

}  // namespace

TEST_SUITE("nn/layers") {
  TEST_CASE("LastTimeStep: the wrapped layer's output at each example's last real step") {
    const LSTM lstm = LSTM::Builder().nOut(2).build();
    const std::vector<std::vector<float>> params{{0.1f, -0.2f, 0.3f, 0.4f, 0.5f, -0.6f, 0.7f, 0.8f},
                                                 {0.1f, 0.2f, -0.3f, 0.1f, 0.2f, 0.3f, 0.1f, -0.1f,
                                                  0.2f, 0.2f, 0.1f, 0.1f, 0.3f, -0.2f, 0.1f, 0.05f},
                                                 {0.0f, 0.1f, 1.0f, 1.0f, 0.0f, 0.2f, -0.1f, 0.1f}};
    auto plain = testutil::bind(lstm, InputType::recurrent(1), params);
    auto last = testutil::bind(LastTimeStep(lstm), InputType::recurrent(1), params);
    const Tensor x = Tensor::fromVector({3, 1, 4}, {0.5f, -1.0f, 2.0f, 0.3f,  //
                                                    1.0f, 1.5f, -0.5f, 0.0f,  //
                                                    -2.0f, 0.1f, 0.2f, 0.7f});
    const Tensor mask = Tensor::fromVector({3, 4}, {1, 1, 1, 0,    // ends at step 2
                                                    0, 1, 1, 1,    // starts late: step 3
                                                    1, 1, 1, 1});  // all: step 3
    const Tensor seq = forward(plain, x, &mask);
    const Tensor y = forward(last, x, &mask);
    REQUIRE(y.shape() == Shape{3, 2});
    const int64_t lastStep[3] = {2, 3, 3};
    for (int64_t e = 0; e < 3; ++e)
      for (int64_t j = 0; j < 2; ++j)
        CHECK(y.at(e * 2 + j) == doctest::Approx(seq.at((e * 2 + j) * 4 + lastStep[e])));

    const Tensor noMask = forward(last, x, nullptr);
    const Tensor seqNoMask = forward(plain, x, nullptr);
    for (int64_t e = 0; e < 3; ++e)
      for (int64_t j = 0; j < 2; ++j)
        CHECK(noMask.at(e * 2 + j) == doctest::Approx(seqNoMask.at((e * 2 + j) * 4 + 3)));
  }

  TEST_CASE("LastTimeStep: the wrapped layer's parameters, feed-forward output") {
    LastTimeStep conf(LSTM::Builder().nOut(5).build());
    CHECK(conf.resolve(0, InputType::recurrent(3, 7), LayerDefaults{}).toString() ==
          "FeedForward(5)");
    const auto specs = conf.paramSpecs();
    REQUIRE(specs.size() == 3);
    CHECK(specs[0].name == "W");
    CHECK(specs[1].name == "RW");
    CHECK(specs[2].name == "b");
    CHECK(conf.numParams() == 3 * 20 + 5 * 20 + 20);
    CHECK((conf.resolvedActivation() == Activation::TANH));  // the LSTM's, adopted
  }

  TEST_CASE("LastTimeStep: gradient check, with a features mask, and it fails when wrong") {
    const LastTimeStep layer(LSTM::Builder().nOut(4).build());
    DataSet data = lastStepData(3, 5, 31);
    MultiLayerNetwork good = lastStepNetwork(layer);
    const auto passed = GradientCheckUtil::checkGradients(good, data);
    INFO(passed.report);
    CHECK(passed.passed);
    CHECK(passed.checked == good.numParams() + data.features.numel());

    data.featuresMask = Tensor::fromVector({3, 5}, {1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1});
    const auto masked = GradientCheckUtil::checkGradients(good, data);
    INFO(masked.report);
    CHECK(masked.passed);

    MultiLayerNetwork bad = lastStepNetwork(testing::corruptGradients(layer));
    const auto failed = GradientCheckUtil::checkGradients(bad, data);
    CHECK_FALSE(failed.passed);
    CHECK(failed.failed >= 10);
  }

  TEST_CASE("LastTimeStep: a padded batch scores as its sequences one at a time") {
    DataSet batch = lastStepData(2, 5, 12);
    batch.featuresMask = Tensor::fromVector({2, 5}, {1, 1, 1, 0, 0, 1, 1, 1, 1, 1});
    for (int64_t k = 0; k < 3; ++k)  // the padding's values must not matter
      for (int64_t s = 3; s < 5; ++s) batch.features.data()[k * 5 + s] = 9.0f;
    MultiLayerNetwork net = lastStepNetwork(LastTimeStep(SimpleRnn::Builder().nOut(4).build()));
    std::vector<float> a, b;
    for (int64_t k = 0; k < 3; ++k) {
      for (int64_t s = 0; s < 3; ++s) a.push_back(batch.features.at(k * 5 + s));
      for (int64_t s = 0; s < 5; ++s) b.push_back(batch.features.at(15 + k * 5 + s));
    }
    const DataSet one{Tensor::fromVector({1, 3, 3}, a), batch.labels.rows(0, 1).clone()};
    const DataSet two{Tensor::fromVector({1, 3, 5}, b), batch.labels.rows(1, 2).clone()};
    CHECK(net.score(batch) == doctest::Approx((net.score(one) + net.score(two)) / 2).epsilon(1e-5));
  }

  TEST_CASE("LastTimeStep: JSON round trip and typed errors") {
    const MultiLayerConfiguration conf =
        NeuralNetConfiguration::Builder()
            .list()
            .layer(
                LastTimeStep(LSTM::Builder().nOut(4).forgetGateBiasInit(2.0).name("inner").build()))
            .layer(OutputLayer::Builder().nOut(2).build())
            .setInputType(InputType::recurrent(3))
            .build();
    const MultiLayerConfiguration parsed = MultiLayerConfiguration::fromJson(conf.toJson());
    CHECK(parsed.toJson() == conf.toJson());
    const auto& last = dynamic_cast<const LastTimeStep&>(*parsed.layers[0]);
    const auto& lstm = dynamic_cast<const LSTM&>(*last.underlying());
    CHECK(lstm.forgetGateBiasInit == 2.0);
    CHECK(lstm.name == "inner");
    CHECK(lstm.nIn == 3);
    CHECK(parsed.layerOutputTypes[0].toString() == "FeedForward(4)");

    testutil::expectConfigError(
        NeuralNetConfiguration::Builder()
            .list()
            .layer(LastTimeStep(DenseLayer::Builder().nOut(4).build()))
            .layer(OutputLayer::Builder().nOut(2).build())
            .setInputType(InputType::recurrent(3)),
        {"layer 0 (LastTimeStep)", "wraps a recurrent layer", "DenseLayer"});
    testutil::expectConfigError(NeuralNetConfiguration::Builder()
                                    .list()
                                    .layer(LastTimeStep(LSTM::Builder().nOut(4).build()))
                                    .layer(OutputLayer::Builder().nOut(2).build())
                                    .setInputType(InputType::feedForward(3)),
                                {"layer 0 (LastTimeStep)", "needs sequences"});
    testutil::expectConfigError(NeuralNetConfiguration::Builder()
                                    .list()
                                    .layer(LastTimeStep())
                                    .layer(OutputLayer::Builder().nOut(2).build())
                                    .setInputType(InputType::recurrent(3)),
                                {"layer 0 (LastTimeStep)", "no underlying layer"});
  }
}
