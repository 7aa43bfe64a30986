// Dropout: dropOut(p) on a layer's input and DropoutLayer. Masks against the counter-based
// formula, inference as identity, reproducibility for a seed, gradient checks (and their failure
// on a wrong gradient), JSON, bad configurations.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <vector>

#include "LayerTestUtil.h"
#include "nn/backend/CounterRandom.h"
#include "nn/gradientcheck/CorruptedGradientLayer.h"
#include "nn/layers/InputDropout.h"
#include "parallel/ParallelTestUtil.h"

using namespace dl4cpp;

namespace {

MultiLayerConfiguration droppedNet(const Layer& hidden, double networkDropOut = 0) {
  return NeuralNetConfiguration::Builder()
      .seed(21)
      .updater(Sgd(0.1))
      .dropOut(networkDropOut)
      .list()
      .layer(hidden)
      .layer(OutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(3)
                 .activation(Activation::SOFTMAX)
                 .build())
      .setInputType(InputType::feedForward(6))
      .build();
}

DenseLayer denseWithDropout(double p) {
  return DenseLayer::Builder().nOut(5).activation(Activation::TANH).dropOut(p).build();
}

}  // namespace

TEST_SUITE("nn/layers") {
  TEST_CASE("Dropout: the mask keeps about p of the values, scaled by 1/p, by the seed alone") {
    DeviceContext ctx;
    Tensor mask(Shape{1 << 16});
    ctx.backend().dropoutMask(99, 0.75f, mask);
    const uint32_t threshold = keepThreshold24(0.75f);
    int64_t kept = 0;
    for (int64_t i = 0; i < mask.numel(); ++i) {
      const float expected = dropoutMaskValue(99, uint64_t(i), threshold, 1.0f / 0.75f);
      if (mask.at(i) != expected) FAIL("element " << i << ": " << mask.at(i) << " != " << expected);
      CHECK((mask.at(i) == 0.0f || mask.at(i) == 1.0f / 0.75f));
      kept += mask.at(i) != 0.0f;
    }
    // 65536 Bernoulli(0.75) draws: the standard deviation of the count is about 111.
    CHECK(std::abs(double(kept) - 0.75 * double(mask.numel())) < 600);
    Tensor other(mask.shape());
    ctx.backend().dropoutMask(100, 0.75f, other);
    CHECK(other.toVector() != mask.toVector());
  }

  TEST_CASE("Dropout: DropoutLayer drops in training and is the identity in inference") {
    const DropoutLayer conf(0.5);
    auto bound = testutil::bind(conf, InputType::feedForward(4), {});
    auto layer = layers::withInputDropout(*conf.dropOut, std::move(bound.layer));
    const Tensor x = Tensor::fromVector({64, 4}, std::vector<float>(256, 3.0f));
    Tensor y(x.shape());
    DeviceContext ctx;
    layer->forward(ctx, x, y, ForwardContext{false, 5});
    CHECK(y.toVector() == x.toVector());

    const ForwardContext training{true, 5};
    layer->forward(ctx, x, y, training);
    int64_t zeros = 0;
    for (int64_t i = 0; i < y.numel(); ++i) {
      CHECK((y.at(i) == 0.0f || y.at(i) == 6.0f));
      zeros += y.at(i) == 0.0f;
    }
    CHECK(zeros > 80);
    CHECK(zeros < 176);
    // Backward passes the gradient where the value was kept, scaled by 1/p.
    const Tensor dy = Tensor::fromVector({64, 4}, std::vector<float>(256, 1.0f));
    Tensor dx(x.shape());
    layer->backward(ctx, x, dy, false, &dx);
    for (int64_t i = 0; i < y.numel(); ++i) CHECK(dx.at(i) == y.at(i) / 3.0f);
  }

  TEST_CASE("Dropout: the same seed gives bit-identical training, another seed does not") {
    auto train = [](uint64_t seed) {
      MultiLayerConfiguration conf = droppedNet(denseWithDropout(0.6));
      conf.seed = seed;
      MultiLayerNetwork net(conf);
      net.init();
      for (int i = 0; i < 4; ++i)
        net.fit(testutil::randomClassificationBatch(8, 6, 3, uint64_t(i)));
      return net.params().toVector();
    };
    const auto first = train(21);
    CHECK(train(21) == first);
    CHECK(train(22) != first);
    // Without dropout the masks play no part: a different result again.
    MultiLayerNetwork plain(droppedNet(denseWithDropout(0)));
    plain.init();
    for (int i = 0; i < 4; ++i)
      plain.fit(testutil::randomClassificationBatch(8, 6, 3, uint64_t(i)));
    CHECK(plain.params().toVector() != first);
  }

  TEST_CASE("Dropout: ParallelWrapper runs with the same seed are bit-identical") {
    auto train = [] {
      MultiLayerNetwork root(droppedNet(denseWithDropout(0.7)));
      root.init();
      std::vector<DataSet> data;
      for (int i = 0; i < 8; ++i)
        data.push_back(testutil::randomClassificationBatch(6, 6, 3, uint64_t(40 + i)));
      ListDataSetIterator it(data);
      auto wrapper = testutil::wrapperOnCpu(root).workers(2).averagingFrequency(2).build();
      wrapper.fit(it);
      return root.params().toVector();
    };
    const auto first = train();
    CHECK(train() == first);
  }

  TEST_CASE("Dropout: gradient checks with dropout pass, and fail on a wrong gradient") {
    const DataSet data = testutil::randomClassificationBatch(5, 6, 3, 8);
    MultiLayerNetwork good(droppedNet(denseWithDropout(0.6)));
    good.init();
    const auto passed = GradientCheckUtil::checkGradients(good, data);
    INFO(passed.report);
    CHECK(passed.passed);

    MultiLayerNetwork bad(droppedNet(testing::corruptGradients(denseWithDropout(0.6))));
    bad.init();
    CHECK_FALSE(GradientCheckUtil::checkGradients(bad, data).passed);

    // A DropoutLayer between two dense layers, and dropout set for the whole network.
    MultiLayerNetwork layered(
        NeuralNetConfiguration::Builder()
            .seed(3)
            .dropOut(0.8)
            .list()
            .layer(DenseLayer::Builder().nOut(5).activation(Activation::TANH).build())
            .layer(DropoutLayer::Builder(0.5).build())
            .layer(OutputLayer::Builder(LossFunction::MCXENT)
                       .nOut(3)
                       .activation(Activation::SOFTMAX)
                       .build())
            .setInputType(InputType::feedForward(6))
            .build());
    layered.init();
    const auto result = GradientCheckUtil::checkGradients(layered, data);
    INFO(result.report);
    CHECK(result.passed);
  }

  TEST_CASE("Dropout: JSON round trip, network default, and bad retain probabilities") {
    const MultiLayerConfiguration conf = droppedNet(DropoutLayer::Builder(0.3).build(), 0.9);
    const MultiLayerConfiguration parsed = MultiLayerConfiguration::fromJson(conf.toJson());
    CHECK(parsed.layers[0]->typeName() == "DropoutLayer");
    CHECK(*parsed.layers[0]->dropOut == 0.3);  // its own, not the network's
    CHECK(*parsed.layers[1]->dropOut == 0.9);  // inherited
    CHECK(parsed.defaults.dropOut == 0.9);
    CHECK(parsed.toJson() == conf.toJson());

    const std::string message =
        testutil::thrownMessage<ConfigError>([] { droppedNet(denseWithDropout(1.5)); });
    CHECK(message.find("layer 0 (DenseLayer): dropOut must be in [0, 1] (the probability of "
                       "keeping a value") != std::string::npos);
    CHECK_THROWS_AS(droppedNet(denseWithDropout(-0.1)), ConfigError);
  }
}
