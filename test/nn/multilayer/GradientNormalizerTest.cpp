// DL4J's GradientNormalization modes on a tiny network, against the normalised gradient computed
// in double from the raw one (BaseMultiLayerUpdater.preApply), applied before l2 and the updater.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "nn/backend/DeviceContext.h"
#include "nn/multilayer/GradientNormalizer.h"
#include "nn/multilayer/OneStepTestUtil.h"

using namespace dl4cpp;
using namespace testutil;

namespace {

constexpr double kLr = 0.1, kL2 = 0.2;

// tinyNet() with Sgd, l2 on the weights and `mode` network-wide (the output layer's own mode when
// given).
MultiLayerConfiguration normalizedNet(
    GradientNormalization mode, double threshold,
    std::optional<GradientNormalization> outputMode = std::nullopt) {
  OutputLayer::Builder output = tinyOutput();
  if (outputMode) output.gradientNormalization(*outputMode);
  return tinyNet(NeuralNetConfiguration::Builder()
                     .seed(9)
                     .updater(Sgd(kLr))
                     .l2(kL2)
                     .biasInit(0.1)
                     .gradientNormalization(mode)
                     .gradientNormalizationThreshold(threshold),
                 output.build());
}

OneStep fitNormalized(GradientNormalization mode, double threshold,
                      std::optional<GradientNormalization> outputMode = std::nullopt) {
  return fitOnce(normalizedNet(mode, threshold, outputMode), tinyBatch({3, -2, -1, 4}));
}

struct Range {
  size_t begin, end;
};
const std::vector<Range> kLayers{{0, 8}, {8, 14}};
const std::vector<Range> kParams{{0, 6}, {6, 8}, {8, 12}, {12, 14}};
bool isWeight(size_t i) { return i < 6 || (i >= 8 && i < 12); }

double norm(const std::vector<double>& g, Range r) {
  double sum = 0;
  for (size_t i = r.begin; i < r.end; ++i) sum += g[i] * g[i];
  return std::sqrt(sum);
}

// DL4J's preApply of `mode` on the raw gradient, in double, over each layer's range or (the
// PerParamType modes) each parameter's.
std::vector<double> normalized(std::vector<double> g, GradientNormalization mode, double t) {
  const bool perParam = mode == GradientNormalization::RenormalizeL2PerParamType ||
                        mode == GradientNormalization::ClipL2PerParamType;
  for (Range r : perParam ? kParams : kLayers) {
    const double n = norm(g, r);
    for (size_t i = r.begin; i < r.end; ++i) switch (mode) {
        case GradientNormalization::RenormalizeL2PerLayer:
        case GradientNormalization::RenormalizeL2PerParamType:
          g[i] /= n;
          break;
        case GradientNormalization::ClipL2PerLayer:
        case GradientNormalization::ClipL2PerParamType:
          if (n > t) g[i] *= t / n;
          break;
        case GradientNormalization::ClipElementWiseAbsoluteValue:
          g[i] = std::clamp(g[i], -t, t);
          break;
        case GradientNormalization::None:
          break;
      }
  }
  return g;
}

// Sgd with l2 on the weights, the l2 term added after normalisation.
void checkStep(const OneStep& s, const std::vector<double>& g) {
  for (size_t i = 0; i < s.after.size(); ++i) {
    INFO("parameter " << i);
    const double expected = s.before[i] - kLr * (g[i] + (isWeight(i) ? kL2 * s.before[i] : 0.0));
    CHECK(s.after[i] == doctest::Approx(expected).epsilon(1e-6));
  }
}

}  // namespace

TEST_SUITE("nn/multilayer") {
  TEST_CASE("GradientNormalization: DL4J's threshold default is 1.0, the mode's None") {
    const MultiLayerConfiguration conf = normalizedNet(GradientNormalization::None, 1.0);
    const LayerDefaults d;
    CHECK((d.gradientNormalization == GradientNormalization::None));
    CHECK(d.gradientNormalizationThreshold == 1.0);
    CHECK(*conf.layers[0]->gradientNormalizationThreshold == 1.0);
  }

  TEST_CASE("GradientNormalization: every mode, before l2 and the updater, as DL4J's preApply") {
    const OneStep raw = fitNormalized(GradientNormalization::None, 1.0);
    checkStep(raw, raw.gradient);
    // Thresholds between the smallest and the largest of what each mode compares, so that it
    // clips some and leaves others.
    std::vector<double> layerNorms, paramNorms, magnitudes;
    for (Range r : kLayers) layerNorms.push_back(norm(raw.gradient, r));
    for (Range r : kParams) paramNorms.push_back(norm(raw.gradient, r));
    for (double v : raw.gradient) magnitudes.push_back(std::fabs(v));
    auto between = [](const std::vector<double>& v) {
      const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
      REQUIRE(*lo < *hi);
      return std::sqrt(std::max(*lo, 1e-6) * *hi);
    };
    struct Case {
      GradientNormalization mode;
      double threshold;
    };
    for (Case c : {Case{GradientNormalization::RenormalizeL2PerLayer, 1.0},
                   Case{GradientNormalization::RenormalizeL2PerParamType, 1.0},
                   Case{GradientNormalization::ClipElementWiseAbsoluteValue, between(magnitudes)},
                   Case{GradientNormalization::ClipL2PerLayer, between(layerNorms)},
                   Case{GradientNormalization::ClipL2PerParamType, between(paramNorms)}}) {
      INFO("mode " << toString(c.mode));
      CAPTURE(c.threshold);
      const OneStep s = fitNormalized(c.mode, c.threshold);
      CHECK(s.before == raw.before);
      CHECK(s.gradient == raw.gradient);
      const std::vector<double> g = normalized(raw.gradient, c.mode, c.threshold);
      REQUIRE(g != raw.gradient);  // the mode changed something
      checkStep(s, g);
    }
  }

  TEST_CASE("GradientNormalization: a layer's own mode overrides the network's") {
    const OneStep raw = fitNormalized(GradientNormalization::None, 1.0);
    const double t = 1e-3;  // below every gradient's magnitude: every element is clipped
    const OneStep s = fitNormalized(GradientNormalization::ClipElementWiseAbsoluteValue, t,
                                    GradientNormalization::None);
    std::vector<double> g =
        normalized(raw.gradient, GradientNormalization::ClipElementWiseAbsoluteValue, t);
    for (size_t i = 8; i < 14; ++i) g[i] = raw.gradient[i];  // the output layer: as computed
    checkStep(s, g);
  }

  TEST_CASE("GradientNormalizer: renormalising a zero gradient divides by 1e-5, not 0 (DL4J)") {
    DeviceContext ctx;
    Tensor zeros(Shape{5});
    Tensor small = Tensor::fromVector(Shape{2}, {3e-6f, -4e-6f});  // norm 5e-6
    GradientNormalizer normalizer;
    normalizer.addLayer(0, GradientNormalization::RenormalizeL2PerLayer, 1.0, {zeros}, zeros);
    normalizer.addLayer(1, GradientNormalization::RenormalizeL2PerLayer, 1.0, {small}, small);
    normalizer.apply(ctx.backend(), nullptr);
    for (float v : zeros.toVector()) CHECK(v == 0.0f);
    CHECK(small.at(0) == doctest::Approx(0.6).epsilon(1e-6));
    CHECK(small.at(1) == doctest::Approx(-0.8).epsilon(1e-6));
  }

  TEST_CASE("GradientNormalizer: element-wise clipping keeps NaN and needs no norm") {
    DeviceContext ctx;
    Tensor g = Tensor::fromVector(Shape{4}, {2.0f, -0.25f, -3.0f, 0.5f});
    g.data()[1] = std::numeric_limits<float>::quiet_NaN();
    GradientNormalizer normalizer;
    normalizer.addLayer(0, GradientNormalization::ClipElementWiseAbsoluteValue, 0.5, {g}, g);
    CHECK_FALSE(normalizer.empty());
    normalizer.apply(ctx.backend(), nullptr);
    CHECK(g.at(0) == 0.5f);
    CHECK(std::isnan(g.at(1)));
    CHECK(g.at(2) == -0.5f);
    CHECK(g.at(3) == 0.5f);
    GradientNormalizer none;
    none.addLayer(0, GradientNormalization::None, 0.5, {g}, g);
    CHECK(none.empty());
  }
}
