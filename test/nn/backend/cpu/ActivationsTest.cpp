// The CPU backend's ReLU, leaky ReLU and softmax loops (Activations.h) against plain scalar
// references: odd element counts (vector tails), counts above the parallel threshold, forward in
// place and apart, backward in place (dx aliasing dy), softmax rows of width 1 and 10 with values
// near 1000 (overflow without the row maximum subtracted) and over the channels of an NCHW tensor,
// the same bits on 1 and 2 threads, and the errors oneDNN raised for these activations before.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "nn/backend/cpu/Activations.h"
#include "nn/backend/cpu/CpuBackend.h"

using namespace dl4cpp;

namespace {

// Element counts: one, vector tails, and past the parallel threshold with an odd split.
const std::vector<int64_t> kCounts = {1, 17, 1000, 3 * cpu::kActivationsParallelMinElements + 7};

// Negative, zero and positive values, none repeating in a short period.
Tensor mixedSigns(const Shape& shape, int64_t salt) {
  Tensor t(shape);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data()[i] = 0.125f * static_cast<float>((i * 7919 + salt * 31) % 41 - 20);
  return t;
}

float reluReference(float alpha, float x) { return x > 0.0f ? x : alpha * x; }
float reluBackwardReference(float alpha, float y, float dy) { return y > 0.0f ? dy : alpha * dy; }

// Checks y = f(x) and dx = f'(.) * dy for ReLU (alpha 0) or leaky ReLU, dx both apart from and
// aliasing dy. `passedAlpha` is what the backend receives: layers pass their configured
// leakyReluAlpha to every activation, which ReLU must ignore.
void checkRelu(ActivationKind kind, float passedAlpha, int64_t count) {
  CAPTURE(count);
  const float alpha = kind == ActivationKind::LEAKYRELU ? passedAlpha : 0.0f;
  cpu::CpuBackend backend;
  const Tensor x = mixedSigns(Shape{count}, 1), dy = mixedSigns(Shape{count}, 2);
  Tensor y(Shape{count}), inPlaceY = x.clone();
  backend.activationForward(kind, passedAlpha, x, y);
  backend.activationForward(kind, passedAlpha, inPlaceY, inPlaceY);
  int64_t yDiffer = 0;
  for (int64_t i = 0; i < count; ++i) yDiffer += y.data()[i] != reluReference(alpha, x.data()[i]);
  CHECK(yDiffer == 0);
  CHECK(inPlaceY.toVector() == y.toVector());

  Tensor dx(Shape{count}), inPlace = dy.clone();
  dx.fill(123.0f);  // stale values must be overwritten
  backend.activationBackward(kind, passedAlpha, Tensor(), y, dy, dx);
  backend.activationBackward(kind, passedAlpha, Tensor(), y, inPlace, inPlace);
  int64_t dxDiffer = 0, inPlaceDiffer = 0;
  for (int64_t i = 0; i < count; ++i) {
    const float want = reluBackwardReference(alpha, y.data()[i], dy.data()[i]);
    dxDiffer += dx.data()[i] != want;
    inPlaceDiffer += inPlace.data()[i] != want;
  }
  CHECK(dxDiffer == 0);
  CHECK(inPlaceDiffer == 0);
}

// Softmax over dimension 1 of (N, C, rest...) in double: exp(v - max) / sum per line; with `log`,
// its logarithm v - max - log(sum).
std::vector<double> softmaxReference(const Tensor& x, bool log = false) {
  const int64_t n = x.dim(0), c = x.dim(1), rest = x.numel() / (n * c);
  std::vector<double> y(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t r = 0; r < rest; ++r) {
      auto at = [&](int64_t k) { return (i * c + k) * rest + r; };
      double largest = x.data()[at(0)];
      for (int64_t k = 1; k < c; ++k) largest = std::max(largest, double(x.data()[at(k)]));
      double sum = 0;
      for (int64_t k = 0; k < c; ++k) sum += std::exp(x.data()[at(k)] - largest);
      for (int64_t k = 0; k < c; ++k)
        y[static_cast<size_t>(at(k))] = log ? x.data()[at(k)] - largest - std::log(sum)
                                            : std::exp(x.data()[at(k)] - largest) / sum;
    }
  return y;
}

// dx = y * (dy - sum(dy * y)) per line, in double; with `log` (y a log-softmax),
// dx = dy - exp(y) * sum(dy).
std::vector<double> softmaxBackwardReference(const Tensor& y, const Tensor& dy, bool log = false) {
  const int64_t n = y.dim(0), c = y.dim(1), rest = y.numel() / (n * c);
  std::vector<double> dx(static_cast<size_t>(y.numel()));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t r = 0; r < rest; ++r) {
      auto at = [&](int64_t k) { return (i * c + k) * rest + r; };
      double dot = 0, sum = 0;
      for (int64_t k = 0; k < c; ++k) dot += double(dy.data()[at(k)]) * y.data()[at(k)];
      for (int64_t k = 0; k < c; ++k) sum += dy.data()[at(k)];
      for (int64_t k = 0; k < c; ++k)
        dx[static_cast<size_t>(at(k))] =
            log ? dy.data()[at(k)] - std::exp(double(y.data()[at(k)])) * sum
                : y.data()[at(k)] * (dy.data()[at(k)] - dot);
    }
  return dx;
}

int64_t countFar(const Tensor& got, const std::vector<double>& want) {
  int64_t far = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const double w = want[static_cast<size_t>(i)];
    far += !(std::abs(got.data()[i] - w) <= 1e-6 + 1e-5 * std::abs(w));  // NaN counts as far
  }
  return far;
}

// Forward against the reference, then backward both apart from and aliasing dy. Values are
// offset by `offset` (1000: exp overflows unless the line's maximum is subtracted).
void checkSoftmax(const Shape& shape, float offset, ActivationKind kind = ActivationKind::SOFTMAX) {
  CAPTURE(shape.toString());
  const bool log = kind == ActivationKind::LOGSOFTMAX;
  cpu::CpuBackend backend;
  Tensor x = mixedSigns(shape, 3);
  for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] += offset;
  Tensor y(shape), inPlaceY = x.clone();
  backend.activationForward(kind, 0.0f, x, y);
  backend.activationForward(kind, 0.0f, inPlaceY, inPlaceY);
  CHECK(countFar(y, softmaxReference(x, log)) == 0);
  CHECK(inPlaceY.toVector() == y.toVector());

  const Tensor dy = mixedSigns(shape, 4);
  const std::vector<double> want = softmaxBackwardReference(y, dy, log);
  Tensor dx(shape), inPlace = dy.clone();
  dx.fill(123.0f);
  backend.activationBackward(kind, 0.0f, Tensor(), y, dy, dx);
  backend.activationBackward(kind, 0.0f, Tensor(), y, inPlace, inPlace);
  CHECK(countFar(dx, want) == 0);
  CHECK(countFar(inPlace, want) == 0);
}

// Forward and backward (in place) of `kind` on `threads` threads.
std::vector<float> runOn(int threads, ActivationKind kind, const Shape& shape) {
  cpu::CpuBackend backend;
  backend.bindToCurrentThread(threads);
  Tensor y = mixedSigns(shape, 5), dy = mixedSigns(shape, 6);
  backend.activationForward(kind, 0.25f, y, y);
  backend.activationBackward(kind, 0.25f, Tensor(), y, dy, dy);
  std::vector<float> out = y.toVector();
  const std::vector<float> dx = dy.toVector();
  out.insert(out.end(), dx.begin(), dx.end());
  return out;
}

}  // namespace

TEST_SUITE("nn/backend/cpu") {
  TEST_CASE("Activations: ReLU forward and backward equal the scalar formulas, alpha ignored") {
    for (int64_t count : kCounts) checkRelu(ActivationKind::RELU, 0.25f, count);
  }
  TEST_CASE("Activations: leaky ReLU forward and backward equal the scalar formulas") {
    for (int64_t count : kCounts) checkRelu(ActivationKind::LEAKYRELU, 0.25f, count);
    checkRelu(ActivationKind::LEAKYRELU, 0.0f, 17);
  }
  TEST_CASE("Activations: softmax rows of width 1 and 10, values near 0 and near 1000") {
    for (float offset : {0.0f, 1000.0f}) {
      CAPTURE(offset);
      checkSoftmax(Shape{1, 1}, offset);
      checkSoftmax(Shape{17, 1}, offset);
      checkSoftmax(Shape{1, 10}, offset);
      checkSoftmax(Shape{128, 10}, offset);
      checkSoftmax(Shape{7, 1000}, offset);
    }
  }
  TEST_CASE("Activations: softmax of width 1 is 1, of equal values uniform, one dominant one-hot") {
    cpu::CpuBackend backend;
    Tensor y(Shape{3, 1});
    y.fill(-5.0f);
    backend.activationForward(ActivationKind::SOFTMAX, 0.0f, y, y);
    CHECK(y.toVector() == std::vector<float>(3, 1.0f));
    Tensor uniform(Shape{2, 4});
    uniform.fill(1000.0f);
    backend.activationForward(ActivationKind::SOFTMAX, 0.0f, uniform, uniform);
    CHECK(uniform.toVector() == std::vector<float>(8, 0.25f));
    // 1000 in column r of row r: exp(1000 - max) must not be formed without the maximum, wherever
    // it lies.
    Tensor dominant(Shape{10, 10});
    dominant.fill(0.0f);
    std::vector<float> oneHot(100, 0.0f);
    for (int64_t r = 0; r < 10; ++r) {
      dominant.data()[r * 11] = 1000.0f;
      oneHot[static_cast<size_t>(r * 11)] = 1.0f;
    }
    backend.activationForward(ActivationKind::SOFTMAX, 0.0f, dominant, dominant);
    CHECK(dominant.toVector() == oneHot);
  }
  TEST_CASE("Activations: softmax over the channels of NCHW and past the parallel threshold") {
    checkSoftmax(Shape{3, 5, 4, 7}, 1000.0f);
    checkSoftmax(Shape{3 * cpu::kActivationsParallelMinElements / 10 + 1, 10}, 0.0f);
  }
  TEST_CASE("Activations: log-softmax rows and NCHW channels, values near 0 and near 1000") {
    for (float offset : {0.0f, 1000.0f}) {
      CAPTURE(offset);
      checkSoftmax(Shape{17, 1}, offset, ActivationKind::LOGSOFTMAX);
      checkSoftmax(Shape{128, 10}, offset, ActivationKind::LOGSOFTMAX);
      checkSoftmax(Shape{3, 5, 4, 7}, offset, ActivationKind::LOGSOFTMAX);
    }
    checkSoftmax(Shape{3 * cpu::kActivationsParallelMinElements / 10 + 1, 10}, 0.0f,
                 ActivationKind::LOGSOFTMAX);
  }
  TEST_CASE("Activations: the same bits on 1 and 2 threads") {
    // An odd count of lines and of elements: the two threads' ranges differ in length.
    const Shape large{(3 * cpu::kActivationsParallelMinElements / 11) | 1, 11};
    for (ActivationKind kind :
         {ActivationKind::RELU, ActivationKind::LEAKYRELU, ActivationKind::SOFTMAX,
          ActivationKind::LOGSOFTMAX, ActivationKind::HARDTANH, ActivationKind::HARDSIGMOID,
          ActivationKind::RELU6, ActivationKind::SELU}) {
      CAPTURE(static_cast<int>(kind));
      CHECK(runOn(1, kind, large) == runOn(2, kind, large));
    }
  }
  TEST_CASE("Activations: negative leaky ReLU slope and softmax below rank 2 are BackendErrors") {
    cpu::CpuBackend backend;
    Tensor y(Shape{2, 3}), dx(Shape{2, 3}), flat(Shape{6});
    CHECK_THROWS_AS(backend.activationForward(ActivationKind::LEAKYRELU, -0.1f, y, y),
                    BackendError);
    CHECK_THROWS_AS(
        backend.activationBackward(ActivationKind::LEAKYRELU, -0.1f, Tensor(), y, y, dx),
        BackendError);
    CHECK_THROWS_AS(backend.activationForward(ActivationKind::LEAKYRELU, NAN, y, y), BackendError);
    CHECK_THROWS_AS(backend.activationForward(ActivationKind::SOFTMAX, 0.0f, flat, flat),
                    BackendError);
    CHECK_THROWS_AS(
        backend.activationBackward(ActivationKind::SOFTMAX, 0.0f, Tensor(), flat, flat, flat),
        BackendError);
    backend.activationForward(ActivationKind::RELU, -0.1f, y, y);  // ReLU ignores alpha
  }
}
