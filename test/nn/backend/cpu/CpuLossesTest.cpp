// Every loss of the CPU backend (CpuElementwise.cpp) against DL4J's formulas evaluated in double:
// the summed score and dL/dy (through the IDENTITY activation, which leaves it unchanged), on
// outputs and labels that reach every clip and both sides of every kink.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "nn/backend/cpu/CpuBackend.h"
#include "nn/conf/Enums.h"

using namespace dl4cpp;

namespace {

constexpr int64_t kRows = 7, kColumns = 5;

double clip(double v, double low, double high) { return std::min(std::max(v, low), high); }

// XENT's clip of y to [1e-5, 1 - 1e-5], with the upper bound as float32 holds it (1 - q near it
// is 1.0013e-5, not 1e-5: the float bound, not the rounding of the formulas, sets the last digits).
constexpr double kXentHigh = 1.0f - 1e-5f;

// One element's term of DL4J's per-example loss (before MSE's and MAE's division by K).
double term(LossKind loss, double y, double l) {
  switch (loss) {
    case LossKind::NEGATIVELOGLIKELIHOOD:
    case LossKind::MCXENT:
      return -l * std::log(clip(y, 1e-10, 1));
    case LossKind::XENT: {
      const double q = clip(y, 1e-5, kXentHigh);
      return -(l * std::log(q) + (1 - l) * std::log(1 - q));
    }
    case LossKind::MSE:
    case LossKind::L2:
      return (y - l) * (y - l);
    case LossKind::MEAN_ABSOLUTE_ERROR:
    case LossKind::L1:
      return std::abs(y - l);
    case LossKind::HINGE:
      return std::max(0.0, 1 - l * y);
    case LossKind::SQUARED_HINGE:
      return std::max(0.0, 1 - l * y) * std::max(0.0, 1 - l * y);
    case LossKind::KL_DIVERGENCE: {
      const double q = clip(l, 1e-5, 1);
      return q * std::log(q / clip(y, 1e-5, 1));
    }
  }
  return NAN;
}

// dL/dy of that term, with the averaging losses' 1/K.
double gradient(LossKind loss, double y, double l) {
  const double sign = (y > l) - (y < l);
  switch (loss) {
    case LossKind::NEGATIVELOGLIKELIHOOD:
    case LossKind::MCXENT:
      return -l / clip(y, 1e-10, 1);
    case LossKind::XENT: {
      const double q = clip(y, 1e-5, kXentHigh);
      return -(l / q - (1 - l) / (1 - q));
    }
    case LossKind::MSE:
      return 2 * (y - l) / kColumns;
    case LossKind::L2:
      return 2 * (y - l);
    case LossKind::MEAN_ABSOLUTE_ERROR:
      return sign / kColumns;
    case LossKind::L1:
      return sign;
    case LossKind::HINGE:
      return 1 - l * y > 0 ? -l : 0;
    case LossKind::SQUARED_HINGE:
      return 1 - l * y > 0 ? -2 * l * (1 - l * y) : 0;
    case LossKind::KL_DIVERGENCE:
      return -clip(l, 1e-5, 1) / clip(y, 1e-5, 1);
  }
  return NAN;
}

// Outputs and labels of the kinds `loss` takes, with values past every clip and kink: outputs
// below 1e-10 and 1e-5 and at 1 for the logarithms, margins on both sides of 1 for the hinges
// (labels -1, +1 and, as DL4J uses them unchanged, 0), zero labels for KL_DIVERGENCE.
std::pair<Tensor, Tensor> outputsAndLabels(LossKind loss) {
  Tensor y(Shape{kRows, kColumns}), l(Shape{kRows, kColumns});
  const bool probabilities = loss == LossKind::NEGATIVELOGLIKELIHOOD || loss == LossKind::MCXENT ||
                             loss == LossKind::XENT || loss == LossKind::KL_DIVERGENCE;
  const bool hinge = loss == LossKind::HINGE || loss == LossKind::SQUARED_HINGE;
  const std::vector<float> tiny{1e-12f, 3e-6f, 1.0f};
  for (int64_t i = 0; i < y.numel(); ++i) {
    const float step = static_cast<float>((i * 37) % 23) / 22.0f;  // [0, 1], scattered
    y.data()[i] = probabilities ? (i % 6 < 3 ? tiny[static_cast<size_t>(i % 6)] : step)
                                : 4.0f * step - 2.0f + 0.013f;
    l.data()[i] = hinge ? static_cast<float>(i % 3) - 1.0f
                        : static_cast<float>((i * 11) % 7) / 6.0f;  // 0 and 1 included
  }
  return {y, l};
}

}  // namespace

TEST_SUITE("nn/backend/cpu") {
  TEST_CASE("Losses: every loss's score and gradient equal DL4J's formulas in double") {
    cpu::CpuBackend backend;
    for (const auto& [loss, name] : kLossNames) {
      const std::string lossName = name;
      CAPTURE(lossName);
      const auto [y, l] = outputsAndLabels(loss);
      double want = 0;
      for (int64_t i = 0; i < y.numel(); ++i) want += term(loss, y.data()[i], l.data()[i]);
      if (lossAveragesOutputs(loss)) want /= kColumns;
      CHECK(backend.lossScore(loss, y, l) == doctest::Approx(want).epsilon(1e-6));

      Tensor dz(y.shape());
      const double score =
          backend.lossForwardBackward(loss, ActivationKind::IDENTITY, 0.0f, Tensor(), y, l, dz);
      CHECK(score == doctest::Approx(want).epsilon(1e-6));
      int64_t far = 0;
      for (int64_t i = 0; i < y.numel(); ++i) {
        const double g = gradient(loss, y.data()[i], l.data()[i]);
        far += !(std::abs(dz.data()[i] - g) <= 1e-6 + 1e-5 * std::abs(g));
      }
      CHECK(far == 0);
    }
  }

  TEST_CASE("Losses: the double gradients are the double scores' slopes") {
    for (const auto& [loss, name] : kLossNames) {
      const std::string lossName = name;
      CAPTURE(lossName);
      for (double l : {-1.0, 0.0, 0.3, 1.0})
        for (double y = 0.0213; y < 1.5; y += 0.0417) {  // within every clip, off every kink
          CAPTURE(l);
          CAPTURE(y);
          const double h = 1e-7;
          const double averaged = lossAveragesOutputs(loss) ? kColumns : 1;
          const double slope = (term(loss, y + h, l) - term(loss, y - h, l)) / (2 * h) / averaged;
          if (y + h < 1 || (loss != LossKind::NEGATIVELOGLIKELIHOOD && loss != LossKind::MCXENT &&
                            loss != LossKind::XENT && loss != LossKind::KL_DIVERGENCE))
            CHECK(gradient(loss, y, l) == doctest::Approx(slope).epsilon(1e-5).scale(1));
        }
    }
  }
}
