// Every element-wise activation of the CPU backend (loops and oneDNN's eltwise primitives alike)
// against DL4J's formulas evaluated in double, forward apart and in place, and backward from what
// Backend::activationBackward says each reads (the output, or the input where
// activationBackwardNeedsInput), apart and in place. The double derivatives are themselves checked
// against central differences of the double formulas. SOFTMAX and LOGSOFTMAX, which are not
// element-wise, are checked line by line in ActivationsTest.cpp.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <string>

#include "nn/backend/cpu/CpuBackend.h"
#include "nn/conf/Enums.h"

using namespace dl4cpp;

namespace {

constexpr double kAlpha = 0.1;  // LEAKYRELU's slope here

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// f(x) as DL4J defines it (OpTypes.h).
double reference(ActivationKind kind, double x) {
  const double geluScale = std::sqrt(2.0 / std::numbers::pi);
  switch (kind) {
    case ActivationKind::IDENTITY:
      return x;
    case ActivationKind::RELU:
      return x > 0 ? x : 0;
    case ActivationKind::LEAKYRELU:
      return x > 0 ? x : kAlpha * x;
    case ActivationKind::TANH:
      return std::tanh(x);
    case ActivationKind::SIGMOID:
      return sigmoid(x);
    case ActivationKind::ELU:
      return x > 0 ? x : std::exp(x) - 1;
    case ActivationKind::SELU:
      return kSeluLambda * (x > 0 ? x : kSeluAlpha * (std::exp(x) - 1));
    case ActivationKind::GELU:
      return x * sigmoid(1.702 * x);
    case ActivationKind::GELU_PRECISE:
      return 0.5 * x * (1 + std::tanh(geluScale * (x + 0.044715 * x * x * x)));
    case ActivationKind::SWISH:
      return x * sigmoid(x);
    case ActivationKind::SOFTPLUS:
      return std::log(1 + std::exp(x));
    case ActivationKind::HARDTANH:
      return std::min(std::max(x, -1.0), 1.0);
    case ActivationKind::HARDSIGMOID:
      return std::min(std::max(0.2 * x + 0.5, 0.0), 1.0);
    case ActivationKind::RELU6:
      return std::min(std::max(x, 0.0), 6.0);
    case ActivationKind::SOFTMAX:
      break;
  }
  FAIL("no element-wise reference for " << toString(kind));
  return 0;
}

// f'(x), 0 on the flat side of every kink.
double referenceDerivative(ActivationKind kind, double x) {
  const double geluScale = std::sqrt(2.0 / std::numbers::pi);
  switch (kind) {
    case ActivationKind::IDENTITY:
      return 1;
    case ActivationKind::RELU:
      return x > 0 ? 1 : 0;
    case ActivationKind::LEAKYRELU:
      return x > 0 ? 1 : kAlpha;
    case ActivationKind::TANH:
      return 1 - std::tanh(x) * std::tanh(x);
    case ActivationKind::SIGMOID:
      return sigmoid(x) * (1 - sigmoid(x));
    case ActivationKind::ELU:
      return x > 0 ? 1 : std::exp(x);
    case ActivationKind::SELU:
      return kSeluLambda * (x > 0 ? 1 : kSeluAlpha * std::exp(x));
    case ActivationKind::GELU: {
      const double s = sigmoid(1.702 * x);
      return s + 1.702 * x * s * (1 - s);
    }
    case ActivationKind::GELU_PRECISE: {
      const double t = std::tanh(geluScale * (x + 0.044715 * x * x * x));
      return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * geluScale * (1 + 3 * 0.044715 * x * x);
    }
    case ActivationKind::SWISH:
      return sigmoid(x) + x * sigmoid(x) * (1 - sigmoid(x));
    case ActivationKind::SOFTPLUS:
      return sigmoid(x);
    case ActivationKind::HARDTANH:
      return x > -1 && x < 1 ? 1 : 0;
    case ActivationKind::HARDSIGMOID:
      return x > -2.5 && x < 2.5 ? 0.2 : 0;
    case ActivationKind::RELU6:
      return x > 0 && x < 6 ? 1 : 0;
    case ActivationKind::SOFTMAX:
      break;
  }
  FAIL("no element-wise reference for " << toString(kind));
  return 0;
}

// Inputs across [-8.2, 8.2] in steps of 0.0137 (every kink's both sides, 6 and -2.5 included),
// past the loops' parallel threshold, and 0 and the kinks themselves.
Tensor inputs() {
  std::vector<float> v;
  for (int k = -600; k <= 600; ++k) v.push_back(0.0137f * static_cast<float>(k));
  for (float kink : {0.0f, -1.0f, 1.0f, -2.5f, 2.5f, 6.0f}) v.push_back(kink);
  const auto n = static_cast<int64_t>(v.size());
  Tensor x(Shape{n * 200});
  for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] = v[static_cast<size_t>(i % n)];
  return x;
}

// Elements of `got` further than 2e-6 + 2e-5 |want| from want(i) (NaN counts as far).
template <typename Want>
int64_t countFar(const Tensor& got, Want&& want) {
  int64_t far = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double w = want(i);
    far += !(std::abs(got.data()[i] - w) <= 2e-6 + 2e-5 * std::abs(w));
  }
  return far;
}

}  // namespace

TEST_SUITE("nn/backend/cpu") {
  TEST_CASE("Activations: every element-wise activation equals DL4J's formula in double") {
    cpu::CpuBackend backend;
    const Tensor x = inputs();
    Tensor dy(x.shape());
    for (int64_t i = 0; i < dy.numel(); ++i) dy.data()[i] = 0.5f + 0.001f * float(i % 997);
    for (const auto& [kind, name] : kActivationNames) {
      if (kind == ActivationKind::SOFTMAX || kind == ActivationKind::LOGSOFTMAX) continue;
      const std::string kindName = name;
      CAPTURE(kindName);
      Tensor y(x.shape()), inPlace = x.clone();
      backend.activationForward(kind, float(kAlpha), x, y);
      backend.activationForward(kind, float(kAlpha), inPlace, inPlace);
      CHECK(countFar(y, [&](int64_t i) { return reference(kind, x.data()[i]); }) == 0);
      CHECK(inPlace.toVector() == y.toVector());

      // Backward gets the input only where it reads it.
      const Tensor given = activationBackwardNeedsInput(kind) ? x : Tensor();
      Tensor dx(x.shape()), dxInPlace = dy.clone();
      backend.activationBackward(kind, float(kAlpha), given, y, dy, dx);
      backend.activationBackward(kind, float(kAlpha), given, y, dxInPlace, dxInPlace);
      CHECK(countFar(dx, [&](int64_t i) {
              return referenceDerivative(kind, x.data()[i]) * dy.data()[i];
            }) == 0);
      CHECK(dxInPlace.toVector() == dx.toVector());
    }
  }

  TEST_CASE("Activations: the double derivatives are the double formulas' slopes") {
    for (const auto& [kind, name] : kActivationNames) {
      if (kind == ActivationKind::SOFTMAX || kind == ActivationKind::LOGSOFTMAX) continue;
      const std::string kindName = name;
      CAPTURE(kindName);
      for (double x = -7.9; x < 8; x += 0.0731) {  // no kink within h of any point
        CAPTURE(x);
        const double h = 1e-6;
        const double slope = (reference(kind, x + h) - reference(kind, x - h)) / (2 * h);
        CHECK(referenceDerivative(kind, x) == doctest::Approx(slope).epsilon(1e-6).scale(1));
      }
    }
  }

  TEST_CASE("Activations: backward of an activation that reads its input fails without it") {
    cpu::CpuBackend backend;
    const Tensor x = inputs();
    Tensor y(x.shape()), dx(x.shape());
    for (ActivationKind kind : {ActivationKind::GELU, ActivationKind::GELU_PRECISE,
                                ActivationKind::SWISH, ActivationKind::SOFTPLUS}) {
      CAPTURE(toString(kind));
      backend.activationForward(kind, 0.0f, x, y);
      CHECK_THROWS_AS(backend.activationBackward(kind, 0.0f, Tensor(), y, y, dx), BackendError);
    }
  }
}
