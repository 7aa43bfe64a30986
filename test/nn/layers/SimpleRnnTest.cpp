#include <doctest/doctest.h>

#include <cmath>

#include "nn/gradientcheck/CorruptedGradientLayer.h"
#include "nn/layers/LayerTestUtil.h"
#include "nn/layers/SequenceTestUtil.h"

using namespace dl4cpp;

TEST_SUITE("nn/layers") {
  TEST_CASE("SimpleRnn: forward by hand, and 0 with a fresh state at a padded step") {
    // nIn 2, nOut 1: W (2, 1) = [0.5, -1], RW (1, 1) = [0.8], b = [0.1].
    auto b = testutil::bind(SimpleRnn::Builder().nOut(1).build(), InputType::recurrent(2),
                            {{0.5f, -1.0f}, {0.8f}, {0.1f}});
    DeviceContext ctx;
    // x (1, 2, 3): feature 0 over the steps, then feature 1.
    const Tensor x = Tensor::fromVector({1, 2, 3}, {1, 0, 2, 0, 1, 1});
    Tensor y(b.layer->outputShape(x.shape()));
    b.layer->forward(ctx, x, y, testutil::mode(true));
    const double h0 = std::tanh(0.5 + 0.1);
    const double h1 = std::tanh(-1 + 0.8 * h0 + 0.1);
    const double h2 = std::tanh(1 - 1 + 0.8 * h1 + 0.1);
    testutil::checkValues(y, {float(h0), float(h1), float(h2)});

    const Tensor mask = Tensor::fromVector({1, 3}, {1, 0, 1});
    ForwardContext fwd = testutil::mode(true);
    fwd.featuresMask = &mask;
    b.layer->forward(ctx, x, y, fwd);
    testutil::checkValues(y, {float(h0), 0.0f, float(std::tanh(1 - 1 + 0.1))});
  }

  TEST_CASE("SimpleRnn: gradient check, and it fails on a wrong gradient") {
    const SimpleRnn rnn = SimpleRnn::Builder().nOut(4).build();
    const DataSet data = testutil::randomSequences(2, 3, 4, 3, 7);
    MultiLayerNetwork good = testutil::sequenceNetwork(rnn, 3, 3);
    const auto passed = GradientCheckUtil::checkGradients(good, data);
    INFO(passed.report);
    CHECK(passed.passed);
    CHECK(passed.checked == good.numParams() + data.features.numel());
    MultiLayerNetwork bad = testutil::sequenceNetwork(testing::corruptGradients(rnn), 3, 3);
    const auto failed = GradientCheckUtil::checkGradients(bad, data);
    CHECK_FALSE(failed.passed);
    CHECK(failed.failed >= 10);
  }

  TEST_CASE("SimpleRnn: JSON round trip") {
    const MultiLayerConfiguration conf =
        NeuralNetConfiguration::Builder()
            .list()
            .layer(SimpleRnn::Builder().nOut(3).activation(Activation::RELU).build())
            .layer(RnnOutputLayer::Builder().nOut(2).activation(Activation::SOFTMAX).build())
            .setInputType(InputType::recurrent(2))
            .build();
    const MultiLayerConfiguration parsed = MultiLayerConfiguration::fromJson(conf.toJson());
    CHECK(parsed.toJson() == conf.toJson());
    CHECK(parsed.layers[0]->typeName() == "SimpleRnn");
    CHECK((parsed.layers[0]->resolvedActivation() == Activation::RELU));
    CHECK(parsed.layers[0]->numParams() == 2 * 3 + 3 * 3 + 3);
  }
}
