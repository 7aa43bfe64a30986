// l2 applies to weights, not biases (as DL4J); biasUpdater drives the biases. l1 and weight decay
// have weight and bias variants, set network-wide and overridden per layer.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

using namespace dl4cpp;

namespace {

double sign(double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); }

}  // namespace

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

  TEST_CASE(
      "MultiLayerNetwork: l1, l1Bias, weightDecay and weightDecayBias steps and score terms, with "
      "a layer's own values over the network's") {
    const double lr = 0.1, lrBias = 0.5;
    const double l1 = 0.03, l1Bias = 0.02, decay = 0.1, decayBias = 0.2, outputDecay = 0.05;
    auto conf =
        NeuralNetConfiguration::Builder()
            .seed(4)
            .updater(Sgd(lr))
            .biasUpdater(Sgd(lrBias))
            .l1(l1)
            .l1Bias(l1Bias)
            .weightDecay(decay)                 // applyLR: decay * lr * p
            .weightDecayBias(decayBias, false)  // decayBias * p
            .biasInit(0.2)
            .list()
            .layer(DenseLayer::Builder().nIn(3).nOut(2).activation(Activation::TANH).build())
            .layer(OutputLayer::Builder(LossFunction::MSE)
                       .nOut(2)
                       .activation(Activation::IDENTITY)
                       .l1(0)                            // the layer's own: no l1 on its weights
                       .weightDecay(outputDecay, false)  // and weight decay without lr
                       .build())
            .build();
    MultiLayerNetwork model(conf);
    model.init();
    const DataSet data{Tensor::fromVector({2, 3}, {0.5f, -1, 0.25f, 1, 0.5f, -0.5f}),
                       Tensor::fromVector({2, 2}, {1, 0, 0, 1})};
    const std::vector<float> before = model.params().toVector();
    const double loss = model.computeGradientAndScore(data);
    const std::vector<float> g = model.gradient().toVector();
    model.fit(data);
    const std::vector<float> after = model.params().toVector();

    // Flat layout: layer 0 W (2x3), b (2); layer 1 W (2x2), b (2).
    enum Kind { HiddenW, HiddenB, OutputW, OutputB };
    const std::vector<Kind> kinds{HiddenW, HiddenW, HiddenW, HiddenW, HiddenW, HiddenW, HiddenB,
                                  HiddenB, OutputW, OutputW, OutputW, OutputW, OutputB, OutputB};
    REQUIRE(after.size() == kinds.size());
    double regularization = 0;
    for (size_t i = 0; i < after.size(); ++i) {
      INFO("parameter " << i);
      const double p = before[i];
      double expected = 0;
      switch (kinds[i]) {
        case HiddenW:
          expected = p - lr * (g[i] + l1 * sign(p)) - decay * lr * p;
          regularization += l1 * std::fabs(p) + 0.5 * decay * p * p;
          break;
        case OutputW:
          expected = p - lr * g[i] - outputDecay * p;
          regularization += 0.5 * outputDecay * p * p;
          break;
        case HiddenB:
        case OutputB:
          expected = p - lrBias * (g[i] + l1Bias * sign(p)) - decayBias * p;
          regularization += l1Bias * std::fabs(p) + 0.5 * decayBias * p * p;
          break;
      }
      CHECK(after[i] == doctest::Approx(expected).epsilon(1e-6));
    }
    // DL4J's score terms: l1 * sum |p| and 0.5 * coeff * ||p||^2 for weight decay.
    CHECK(model.score() == doctest::Approx(loss + regularization).epsilon(1e-6));
    double regularizationAfter = 0;
    for (size_t i = 0; i < after.size(); ++i) {
      const double p = after[i];
      if (kinds[i] == HiddenW) regularizationAfter += l1 * std::fabs(p) + 0.5 * decay * p * p;
      if (kinds[i] == OutputW) regularizationAfter += 0.5 * outputDecay * p * p;
      if (kinds[i] == HiddenB || kinds[i] == OutputB)
        regularizationAfter += l1Bias * std::fabs(p) + 0.5 * decayBias * p * p;
    }
    CHECK(model.calcRegularizationScore() == doctest::Approx(regularizationAfter).epsilon(1e-6));
  }
}
