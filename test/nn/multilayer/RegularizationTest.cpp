// l2 applies to weights, not biases (as DL4J); biasUpdater drives the biases. l1 and weight decay
// have weight and bias variants, set network-wide and overridden per layer.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "nn/multilayer/OneStepTestUtil.h"

using namespace dl4cpp;
using namespace testutil;

namespace {

double sign(double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); }

}  // namespace

TEST_SUITE("nn/multilayer") {
  TEST_CASE(
      "MultiLayerNetwork: one step is p -= lr (g + l2 p) for weights, p -= lrBias g for biases") {
    const double lr = 0.1, lrBias = 0.5, l2 = 0.3;
    const OneStep s = fitOnce(tinyNet(NeuralNetConfiguration::Builder()
                                          .seed(4)
                                          .updater(Sgd(lr))
                                          .biasUpdater(Sgd(lrBias))
                                          .l2(l2)
                                          .biasInit(0.2)),
                              tinyBatch({1, 0, 0, 1}));
    // Flat layout: layer 0 W (2x3), b (2); layer 1 W (2x2), b (2).
    const std::vector<bool> isBias{false, false, false, false, false, false, true,
                                   true,  false, false, false, false, true,  true};
    REQUIRE(s.after.size() == isBias.size());
    for (size_t i = 0; i < s.after.size(); ++i) {
      INFO("parameter " << i);
      const double p = s.before[i], g = s.gradient[i];
      const double expected = isBias[i] ? p - lrBias * g : p - lr * (g + l2 * p);
      CHECK(s.after[i] == doctest::Approx(expected).epsilon(1e-6));
    }
    CHECK(s.before[6] == doctest::Approx(0.2));  // biasInit
  }

  TEST_CASE(
      "MultiLayerNetwork: l1, l1Bias, weightDecay and weightDecayBias steps and score terms, with "
      "a layer's own values over the network's") {
    const double lr = 0.1, lrBias = 0.5;
    const double l1 = 0.03, l1Bias = 0.02, decay = 0.1, decayBias = 0.2, outputDecay = 0.05;
    const OneStep s =
        fitOnce(tinyNet(NeuralNetConfiguration::Builder()
                            .seed(4)
                            .updater(Sgd(lr))
                            .biasUpdater(Sgd(lrBias))
                            .l1(l1)
                            .l1Bias(l1Bias)
                            .weightDecay(decay)                 // applyLR: decay * lr * p
                            .weightDecayBias(decayBias, false)  // decayBias * p
                            .biasInit(0.2),
                        tinyOutput()
                            .l1(0)                            // the layer's own: no l1 on weights
                            .weightDecay(outputDecay, false)  // and weight decay without lr
                            .build()),
                tinyBatch({1, 0, 0, 1}));

    enum Kind { HiddenW, HiddenB, OutputW, OutputB };
    const std::vector<Kind> kinds{HiddenW, HiddenW, HiddenW, HiddenW, HiddenW, HiddenW, HiddenB,
                                  HiddenB, OutputW, OutputW, OutputW, OutputW, OutputB, OutputB};
    REQUIRE(s.after.size() == kinds.size());
    // DL4J's score terms: l1 * sum |p| and 0.5 * coeff * ||p||^2 for weight decay.
    auto regularization = [&](Kind kind, double p) {
      switch (kind) {
        case HiddenW:
          return l1 * std::fabs(p) + 0.5 * decay * p * p;
        case OutputW:
          return 0.5 * outputDecay * p * p;
        default:
          return l1Bias * std::fabs(p) + 0.5 * decayBias * p * p;
      }
    };
    double before = 0, after = 0;
    for (size_t i = 0; i < s.after.size(); ++i) {
      INFO("parameter " << i);
      const double p = s.before[i], g = s.gradient[i];
      double expected = 0;
      switch (kinds[i]) {
        case HiddenW:
          expected = p - lr * (g + l1 * sign(p)) - decay * lr * p;
          break;
        case OutputW:
          expected = p - lr * g - outputDecay * p;
          break;
        case HiddenB:
        case OutputB:
          expected = p - lrBias * (g + l1Bias * sign(p)) - decayBias * p;
          break;
      }
      CHECK(s.after[i] == doctest::Approx(expected).epsilon(1e-6));
      before += regularization(kinds[i], p);
      after += regularization(kinds[i], s.after[i]);
    }
    CHECK(s.score == doctest::Approx(s.loss + before).epsilon(1e-6));
    CHECK(s.regularizationAfter == doctest::Approx(after).epsilon(1e-6));
  }
}
