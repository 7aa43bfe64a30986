// VectorMath.h's tanh and sigmoid against the C library's, at whatever CPU level the suite runs
// (CI runs it capped at avx2 and at the baseline too): every count from 1 to 40 (whole vectors
// and tails of both widths), arguments across the range and beyond the saturation points, and
// the piecewise-linear activations and the refused ones of activateInPlace.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "nn/backend/cpu/VectorMath.h"
#include "nn/core/Error.h"

using namespace dl4cpp;

namespace {

std::vector<float> arguments(int64_t n, float scale) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = scale * (static_cast<float>((i * 37) % 41) - 20.0f) / 20.0f;
  return v;
}

}  // namespace

TEST_SUITE("nn/backend/cpu") {
  TEST_CASE("VectorMath tanh and sigmoid match the C library on every count and range") {
    for (float scale : {0.01f, 1.0f, 6.0f, 60.0f, 1e30f})
      for (int64_t n = 1; n <= 40; ++n) {
        const std::vector<float> x = arguments(n, scale);
        std::vector<float> t = x, s = x;
        cpu::tanhInPlace(t.data(), n);
        cpu::sigmoidInPlace(s.data(), n);
        for (int64_t i = 0; i < n; ++i) {
          const float xi = x[static_cast<size_t>(i)];
          CAPTURE(xi);
          CHECK(t[static_cast<size_t>(i)] == doctest::Approx(std::tanh(xi)).epsilon(1e-6));
          CHECK(s[static_cast<size_t>(i)] ==
                doctest::Approx(1.0f / (1.0f + std::exp(-xi))).epsilon(1e-6));
          CHECK(t[static_cast<size_t>(i)] >= -1.0f);
          CHECK(t[static_cast<size_t>(i)] <= 1.0f);
          CHECK(s[static_cast<size_t>(i)] >= 0.0f);
          CHECK(s[static_cast<size_t>(i)] <= 1.0f);
        }
      }
  }

  TEST_CASE("VectorMath activateInPlace applies the recurrent activations and refuses others") {
    std::vector<float> v = {-2.0f, -0.5f, 0.0f, 0.5f, 2.0f};
    std::vector<float> hardSigmoid = v, hardTanh = v, relu = v, identity = v;
    cpu::activateInPlace(ActivationKind::HARDSIGMOID, hardSigmoid.data(), 5);
    cpu::activateInPlace(ActivationKind::HARDTANH, hardTanh.data(), 5);
    cpu::activateInPlace(ActivationKind::RELU, relu.data(), 5);
    cpu::activateInPlace(ActivationKind::IDENTITY, identity.data(), 5);
    const std::vector<float> hardSigmoidWanted = {0.1f, 0.4f, 0.5f, 0.6f, 0.9f};
    for (size_t i = 0; i < v.size(); ++i)
      CHECK(hardSigmoid[i] == doctest::Approx(hardSigmoidWanted[i]).epsilon(1e-6));
    CHECK(hardTanh == std::vector<float>{-1.0f, -0.5f, 0.0f, 0.5f, 1.0f});
    CHECK(relu == std::vector<float>{0.0f, 0.0f, 0.0f, 0.5f, 2.0f});
    CHECK(identity == v);
    CHECK_THROWS_AS(cpu::activateInPlace(ActivationKind::SOFTMAX, v.data(), 5), BackendError);
  }
}
