// l2 applies to weights, not biases (as DL4J); biasUpdater drives the biases.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

using namespace dl4cpp;

TEST_SUITE("nn/multilayer") {
  TEST_CASE(
      "MultiLayerNetwork: one step is p -= lr (g + l2 p) for weights, p -= lrBias g for biases") {
    const double lr = 0.1, lrBias = 0.5, l2 = 0.3;
    auto conf =
        NeuralNetConfiguration::Builder()
            .seed(4)
            .updater(Sgd(lr))
            .biasUpdater(Sgd(lrBias))
            .l2(l2)
            .biasInit(0.2)
            .list()
            .layer(DenseLayer::Builder().nIn(3).nOut(2).activation(Activation::TANH).build())
            .layer(OutputLayer::Builder(LossFunction::MSE)
                       .nOut(2)
                       .activation(Activation::IDENTITY)
                       .build())
            .build();
    MultiLayerNetwork model(conf);
    model.init();
    const DataSet data{Tensor::fromVector({2, 3}, {0.5f, -1, 0.25f, 1, 0.5f, -0.5f}),
                       Tensor::fromVector({2, 2}, {1, 0, 0, 1})};
    const std::vector<float> before = model.params().toVector();
    model.computeGradientAndScore(data);
    const std::vector<float> g = model.gradient().toVector();
    model.fit(data);
    const std::vector<float> after = model.params().toVector();

    // Flat layout: layer 0 W (2x3), b (2); layer 1 W (2x2), b (2).
    const std::vector<bool> isBias{false, false, false, false, false, false, true,
                                   true,  false, false, false, false, true,  true};
    REQUIRE(after.size() == isBias.size());
    for (size_t i = 0; i < after.size(); ++i) {
      INFO("parameter " << i);
      const double expected =
          isBias[i] ? before[i] - lrBias * g[i] : before[i] - lr * (g[i] + l2 * before[i]);
      CHECK(after[i] == doctest::Approx(expected).epsilon(1e-6));
    }
    CHECK(before[6] == doctest::Approx(0.2));  // biasInit
  }
}
