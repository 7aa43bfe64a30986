#include <doctest/doctest.h>

#include <cmath>

#include "nn/layers/LayerCheckUtil.h"
#include "nn/layers/LayerTestUtil.h"
#include "nn/layers/LossOutputRuntime.h"
#include "nn/layers/SequenceTestUtil.h"

using namespace dl4cpp;

TEST_SUITE("nn/layers") {
  TEST_CASE("RnnOutputLayer: softmax at every step, the loss over the labels mask's steps") {
    // W (2, 1) = [1, -1], b = 0: step 0 z = [0, 0], step 1 z = [ln 3, -ln 3].
    auto b = testutil::bind(RnnOutputLayer::Builder(LossFunction::MCXENT)
                                .nOut(2)
                                .activation(Activation::SOFTMAX)
                                .build(),
                            InputType::recurrent(1), {{1, -1}, {0, 0}});
    DeviceContext ctx;
    const Tensor x = Tensor::fromVector({1, 1, 2}, {0, std::log(3.0f)});
    Tensor y(b.layer->outputShape(x.shape()));
    CHECK(y.shape() == Shape{1, 2, 2});
    b.layer->forward(ctx, x, y, testutil::mode(true));
    testutil::checkValues(y, {0.5f, 0.9f, 0.5f, 0.1f});  // (N, C, T): class 0's steps first

    const Tensor labels = Tensor::fromVector({1, 2, 2}, {1, 1, 0, 0});
    layers::LossOutputRuntime* loss = b.layer->asLossOutput();
    REQUIRE(loss != nullptr);
    Tensor grad(y.shape());
    CHECK(loss->lossGradient(ctx, y, labels, grad) ==
          doctest::Approx(-std::log(0.5) - std::log(0.9)).epsilon(1e-5));
    testutil::checkValues(grad, {-0.5f, -0.1f, 0.5f, 0.1f});

    const Tensor mask = Tensor::fromVector({1, 2}, {1, 0});
    loss->setLabelsMask(&mask);
    CHECK(loss->lossGradient(ctx, y, labels, grad) ==
          doctest::Approx(-std::log(0.5)).epsilon(1e-5));
    testutil::checkValues(grad, {-0.5f, 0.0f, 0.5f, 0.0f});
    CHECK(loss->lossScore(ctx, y, labels) == doctest::Approx(-std::log(0.5)).epsilon(1e-5));
  }

  TEST_CASE("RnnOutputLayer: gradient check, without and with a labels mask") {
    // A SimpleRnn before it so that the output layer's input gradient is checked too.
    const DataSet data = testutil::randomSequences(2, 3, 3, 4, 21);
    const auto out = RnnOutputLayer::Builder(LossFunction::MCXENT)
                         .nOut(4)
                         .activation(Activation::SOFTMAX)
                         .build();
    auto network = [&](const Layer& output) {
      MultiLayerNetwork net(NeuralNetConfiguration::Builder()
                                .seed(3)
                                .list()
                                .layer(SimpleRnn::Builder().nOut(3).build())
                                .layer(output)
                                .setInputType(InputType::recurrent(3))
                                .build());
      net.init();
      return net;
    };
    MultiLayerNetwork good = network(out);
    const auto passed = GradientCheckUtil::checkGradients(good, data);
    INFO(passed.report);
    CHECK(passed.passed);
    // (testing::corruptGradients wraps no loss layer: the wrapper is no LossOutput.)
    DataSet masked = data;
    masked.labelsMask = Tensor::fromVector({2, 3}, {1, 0, 1, 0, 1, 1});
    const auto withMask = GradientCheckUtil::checkGradients(good, masked);
    INFO(withMask.report);
    CHECK(withMask.passed);
  }

  TEST_CASE("RnnOutputLayer: JSON round trip and typed errors") {
    const MultiLayerConfiguration conf = NeuralNetConfiguration::Builder()
                                             .list()
                                             .layer(RnnOutputLayer::Builder(LossFunction::MSE)
                                                        .nOut(2)
                                                        .activation(Activation::IDENTITY)
                                                        .build())
                                             .setInputType(InputType::recurrent(4))
                                             .build();
    CHECK(MultiLayerConfiguration::fromJson(conf.toJson()).toJson() == conf.toJson());
    testutil::expectConfigError(NeuralNetConfiguration::Builder()
                                    .list()
                                    .layer(RnnOutputLayer::Builder().nOut(2).build())
                                    .setInputType(InputType::feedForward(4)),
                                {"layer 0 (RnnOutputLayer)", "needs sequences"});
    testutil::expectConfigError(NeuralNetConfiguration::Builder()
                                    .list()
                                    .layer(RnnOutputLayer::Builder(LossFunction::MSE)
                                               .nOut(2)
                                               .activation(Activation::GELU)
                                               .build())
                                    .setInputType(InputType::recurrent(4)),
                                {"layer 0 (RnnOutputLayer)", "GELU"});
  }
}
