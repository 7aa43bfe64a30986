#include <doctest/doctest.h>

#include <cmath>

#include "nn/conf/layers/RnnLossLayer.h"
#include "nn/gradientcheck/CorruptedGradientLayer.h"
#include "nn/layers/LayerCheckUtil.h"
#include "nn/layers/LayerTestUtil.h"
#include "nn/layers/LossOutputRuntime.h"
#include "nn/layers/SequenceTestUtil.h"

using namespace dl4cpp;

namespace {

// SimpleRnn(3) -> `loss`, so that the loss layer's input gradient is checked through the RNN.
MultiLayerNetwork lossNetwork(const Layer& loss) {
  MultiLayerNetwork net(NeuralNetConfiguration::Builder()
                            .seed(4)
                            .list()
                            .layer(SimpleRnn::Builder().nOut(3).build())
                            .layer(loss)
                            .setInputType(InputType::recurrent(2))
                            .build());
  net.init();
  return net;
}

}  // namespace

TEST_SUITE("nn/layers") {
  TEST_CASE("RnnLossLayer: softmax over each step's features, the loss over the real steps") {
    auto b = testutil::bind(
        RnnLossLayer::Builder(LossFunction::MCXENT).activation(Activation::SOFTMAX).build(),
        InputType::recurrent(2), {});
    DeviceContext ctx;
    // Step 0: z = [0, 0]; step 1: z = [ln 3, -ln 3]... as (N, C, T): class 0's steps first.
    const Tensor x = Tensor::fromVector({1, 2, 2}, {0, std::log(3.0f), 0, -std::log(3.0f)});
    Tensor y(b.layer->outputShape(x.shape()));
    CHECK(y.shape() == Shape{1, 2, 2});
    b.layer->forward(ctx, x, y, testutil::mode(true));
    testutil::checkValues(y, {0.5f, 0.9f, 0.5f, 0.1f});

    const Tensor labels = Tensor::fromVector({1, 2, 2}, {1, 1, 0, 0});
    layers::LossOutputRuntime* loss = b.layer->asLossOutput();
    REQUIRE(loss != nullptr);
    Tensor grad(y.shape());
    CHECK(loss->lossGradient(ctx, y, labels, grad) ==
          doctest::Approx(-std::log(0.5) - std::log(0.9)).epsilon(1e-5));
    testutil::checkValues(grad, {-0.5f, -0.1f, 0.5f, 0.1f});
    Tensor dx(x.shape());
    b.layer->backwardInput(ctx, grad, dx);
    testutil::checkValues(dx, {-0.5f, -0.1f, 0.5f, 0.1f});

    const Tensor mask = Tensor::fromVector({1, 2}, {0, 1});
    loss->setLabelsMask(&mask);
    CHECK(loss->lossGradient(ctx, y, labels, grad) ==
          doctest::Approx(-std::log(0.9)).epsilon(1e-5));
    testutil::checkValues(grad, {0.0f, -0.1f, 0.0f, 0.1f});
    CHECK(loss->lossScore(ctx, y, labels) == doctest::Approx(-std::log(0.9)).epsilon(1e-5));
  }

  TEST_CASE("RnnLossLayer: DL4J's defaults, no parameters") {
    RnnLossLayer conf = RnnLossLayer::Builder().build();
    CHECK((conf.lossFunction == LossFunction::MCXENT));
    CHECK((*conf.activation == Activation::IDENTITY));
    conf = RnnLossLayer::Builder(LossFunction::MSE).build();
    CHECK(conf.resolve(0, InputType::recurrent(4, 6), LayerDefaults{}).toString() ==
          "Recurrent(4, 6)");
    CHECK(conf.numParams() == 0);
  }

  TEST_CASE("RnnLossLayer: gradient check with and without a labels mask, fails when wrong") {
    const DataSet data = testutil::randomSequences(2, 2, 4, 3, 8);
    const RnnLossLayer loss =
        RnnLossLayer::Builder(LossFunction::MCXENT).activation(Activation::SOFTMAX).build();
    MultiLayerNetwork good = lossNetwork(loss);
    const auto passed = GradientCheckUtil::checkGradients(good, data);
    INFO(passed.report);
    CHECK(passed.passed);
    CHECK(passed.checked == good.numParams() + data.features.numel());

    DataSet masked = data;
    masked.labelsMask = Tensor::fromVector({2, 4}, {1, 1, 0, 0, 0, 1, 1, 1});
    const auto withMask = GradientCheckUtil::checkGradients(good, masked);
    INFO(withMask.report);
    CHECK(withMask.passed);

    MultiLayerNetwork bad = lossNetwork(testing::corruptLossGradients(loss));
    const auto failed = GradientCheckUtil::checkGradients(bad, data);
    CHECK_FALSE(failed.passed);
    CHECK(failed.failed >= 5);

    const RnnLossLayer mse =
        RnnLossLayer::Builder(LossFunction::MSE).activation(Activation::TANH).build();
    MultiLayerNetwork tanhNet = lossNetwork(mse);
    const auto r = GradientCheckUtil::checkGradients(tanhNet, masked);
    INFO(r.report);
    CHECK(r.passed);
  }

  TEST_CASE("RnnLossLayer: trains, scores as the sum over real steps per sequence") {
    DataSet data = testutil::randomSequences(4, 2, 5, 3, 2);
    data.labelsMask =
        Tensor::fromVector({4, 5}, {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1});
    MultiLayerNetwork net(
        NeuralNetConfiguration::Builder()
            .seed(5)
            .updater(Adam(5e-2))
            .list()
            .layer(LSTM::Builder().nOut(3).build())
            .layer(
                RnnLossLayer::Builder(LossFunction::MCXENT).activation(Activation::SOFTMAX).build())
            .setInputType(InputType::recurrent(2))
            .build());
    net.init();
    const double before = net.score(data);
    for (int i = 0; i < 60; ++i) net.fit(data);
    CHECK(net.score(data) < 0.7 * before);
  }

  TEST_CASE("RnnLossLayer: JSON and model-file round trip, typed errors") {
    const MultiLayerConfiguration conf =
        NeuralNetConfiguration::Builder()
            .list()
            .layer(SimpleRnn::Builder().nOut(3).build())
            .layer(RnnLossLayer::Builder(LossFunction::MSE).activation(Activation::TANH).build())
            .setInputType(InputType::recurrent(2))
            .build();
    const MultiLayerConfiguration parsed = MultiLayerConfiguration::fromJson(conf.toJson());
    CHECK(parsed.toJson() == conf.toJson());
    const auto& loss = dynamic_cast<const RnnLossLayer&>(*parsed.layers[1]);
    CHECK((loss.lossFunction == LossFunction::MSE));
    CHECK((*loss.activation == Activation::TANH));

    MultiLayerNetwork net(conf);
    net.init();
    const DataSet data = testutil::randomSequences(2, 2, 3, 3, 1);
    MultiLayerNetwork restored =
        ModelSerializer::restoreFromBytes(ModelSerializer::toBytes(net, true));
    CHECK(restored.output(data.features).allClose(net.output(data.features), 1e-6f));

    testutil::expectConfigError(NeuralNetConfiguration::Builder()
                                    .list()
                                    .layer(DenseLayer::Builder().nOut(3).build())
                                    .layer(RnnLossLayer::Builder().build())
                                    .setInputType(InputType::feedForward(3)),
                                {"layer 1 (RnnLossLayer)", "needs sequences", "FeedForward(3)"});
    testutil::expectConfigError(NeuralNetConfiguration::Builder()
                                    .list()
                                    .layer(SimpleRnn::Builder().nOut(3).build())
                                    .layer(RnnLossLayer::Builder(LossFunction::MCXENT).build())
                                    .setInputType(InputType::recurrent(2)),
                                {"layer 1 (RnnLossLayer)", "MCXENT"});
    testutil::expectConfigError(
        NeuralNetConfiguration::Builder()
            .list()
            .layer(SimpleRnn::Builder().nOut(3).build())
            .layer(RnnLossLayer::Builder(LossFunction::MSE).activation(Activation::GELU).build())
            .setInputType(InputType::recurrent(2)),
        {"layer 1 (RnnLossLayer)", "GELU"});
  }
}
