#include "nn/backend/cpu/Activations.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "nn/backend/OpNames.h"
#include "nn/backend/SoftmaxLines.h"
#include "nn/backend/cpu/ParallelFor.h"
#include "nn/backend/cpu/VectorMath.h"
#include "nn/core/Error.h"

namespace dl4cpp::cpu {

namespace {

// body(begin, end) over [0, n) items of `elements` floats in all: split across the OpenMP threads
// (parallelRanges) from kActivationsParallelMinElements on, else in one call.
template <class Body>
void forRange(int64_t n, int64_t elements, const Body& body) {
  if (elements < kActivationsParallelMinElements)
    body(int64_t{0}, n);
  else
    parallelRanges(n, body);
}

void requireNonNegativeSlope(float alpha) {
  if (!(alpha >= 0.0f))
    throw BackendError(
        "LEAKYRELU needs alpha >= 0 (backward reads the input's sign from the "
        "output), got " +
        std::to_string(alpha));
}

// v may alias x: each x is read before its v is written.
void softmaxLine(const float* x, float* v, int64_t channels, int64_t stride) {
  float largest = x[0];
  for (int64_t c = 1; c < channels; ++c) largest = std::max(largest, x[c * stride]);
  float sum = 0.0f;
  for (int64_t c = 0; c < channels; ++c) {
    const float e = std::exp(x[c * stride] - largest);  // <= 1: no overflow for large inputs
    v[c * stride] = e;
    sum += e;
  }
  for (int64_t c = 0; c < channels; ++c) v[c * stride] /= sum;
}

// dx may alias dy: the dot product is complete before the line is written.
void softmaxBackwardLine(const float* y, const float* dy, float* dx, int64_t channels,
                         int64_t stride) {
  float dot = 0.0f;
  for (int64_t c = 0; c < channels; ++c) dot += dy[c * stride] * y[c * stride];
  for (int64_t c = 0; c < channels; ++c) dx[c * stride] = y[c * stride] * (dy[c * stride] - dot);
}

// y = x - max - log(sum exp(x - max)); v may alias x (each x is read before its v is written).
void logSoftmaxLine(const float* x, float* v, int64_t channels, int64_t stride) {
  float largest = x[0];
  for (int64_t c = 1; c < channels; ++c) largest = std::max(largest, x[c * stride]);
  float sum = 0.0f;
  for (int64_t c = 0; c < channels; ++c) sum += std::exp(x[c * stride] - largest);
  // x - max first: exact for values of one magnitude (near 1000, say), then the small log.
  const float logSum = std::log(sum);
  for (int64_t c = 0; c < channels; ++c) v[c * stride] = (x[c * stride] - largest) - logSum;
}

// dx = dy - exp(y) * sum(dy); dx may alias dy: the sum is complete before the line is written.
void logSoftmaxBackwardLine(const float* y, const float* dy, float* dx, int64_t channels,
                            int64_t stride) {
  float sum = 0.0f;
  for (int64_t c = 0; c < channels; ++c) sum += dy[c * stride];
  for (int64_t c = 0; c < channels; ++c)
    dx[c * stride] = dy[c * stride] - std::exp(y[c * stride]) * sum;
}

// The element loops over [begin, end) get their pointers and slope as arguments (see
// parallelRanges): read through the lambda's captures, they would keep GCC from vectorising.
// The analyzer takes the null branch of Tensor::data() (a tensor without storage) for one operand
// while the loop bound comes from another; the backend's callers pass tensors of one shape, so
// that path cannot happen.
// NOLINTBEGIN(clang-analyzer-core.NullDereference)
void clippedLinearRange(ClippedLinear f, const float* x, float* v, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i)
    v[i] = std::min(std::max(f.scale * x[i] + f.shift, f.low), f.high);
}

void clippedLinearBackwardRange(ClippedLinear f, const float* y, const float* dy, float* dx,
                                int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i)
    dx[i] = y[i] > f.low && y[i] < f.high ? f.scale * dy[i] : 0.0f;
}

void seluBackwardRange(const float* y, const float* dy, float* dx, int64_t begin, int64_t end) {
  constexpr auto lambda = static_cast<float>(kSeluLambda);
  constexpr auto lambdaAlpha = static_cast<float>(kSeluLambda * kSeluAlpha);
  for (int64_t i = begin; i < end; ++i) dx[i] = (y[i] > 0.0f ? lambda : y[i] + lambdaAlpha) * dy[i];
}
// NOLINTEND(clang-analyzer-core.NullDereference)

}  // namespace

void reluForward(const Tensor& x, Tensor& y) {
  const float* xs = x.data();
  float* v = y.data();
  forRange(y.numel(), y.numel(),
           [=](int64_t begin, int64_t end) { relu(xs + begin, v + begin, end - begin); });
}

void leakyReluForward(float alpha, const Tensor& x, Tensor& y) {
  requireNonNegativeSlope(alpha);
  const float* xs = x.data();
  float* v = y.data();
  forRange(y.numel(), y.numel(), [=](int64_t begin, int64_t end) {
    leakyRelu(alpha, xs + begin, v + begin, end - begin);
  });
}

void reluBackward(float alpha, const Tensor& y, const Tensor& dy, Tensor& dx) {
  requireNonNegativeSlope(alpha);
  const float* ys = y.data();
  const float* dys = dy.data();
  float* dxs = dx.data();
  forRange(y.numel(), y.numel(), [=](int64_t begin, int64_t end) {
    reluGradient(alpha, ys + begin, dys + begin, dxs + begin, end - begin);
  });
}

bool fusableActivation(ActivationKind kind) {
  return kind == ActivationKind::IDENTITY || kind == ActivationKind::RELU ||
         kind == ActivationKind::LEAKYRELU;
}

void checkFusedActivation(const FusedActivation& f, const char* op) {
  if (!fusableActivation(f.kind))
    throw BackendError(std::string(op) + ": the activation " + toString(f.kind) +
                       " is not IDENTITY, RELU or LEAKYRELU");
  if (f.kind == ActivationKind::LEAKYRELU) requireNonNegativeSlope(f.alpha);
}

void applyFusedActivation(const FusedActivation& f, float* v, int64_t n) {
  if (f.kind == ActivationKind::RELU)
    relu(v, v, n);
  else if (f.kind == ActivationKind::LEAKYRELU)
    leakyRelu(f.alpha, v, v, n);
}

void applyFusedActivationBackward(const FusedActivation& f, const float* y, const float* dy,
                                  float* dx, int64_t n) {
  if (f.kind == ActivationKind::IDENTITY)
    std::copy(dy, dy + n, dx);
  else
    reluGradient(f.kind == ActivationKind::RELU ? 0.0f : f.alpha, y, dy, dx, n);
}

ClippedLinear clippedLinear(ActivationKind kind) {
  switch (kind) {
    case ActivationKind::HARDTANH:
      return {1.0f, 0.0f, -1.0f, 1.0f};
    case ActivationKind::HARDSIGMOID:
      return {0.2f, 0.5f, 0.0f, 1.0f};
    case ActivationKind::RELU6:
      return {1.0f, 0.0f, 0.0f, 6.0f};
    default:
      throw BackendError("clippedLinear: not a clipped linear activation");
  }
}

void clippedLinearForward(const ClippedLinear& f, const Tensor& x, Tensor& y) {
  const float* xs = x.data();
  float* v = y.data();
  forRange(y.numel(), y.numel(),
           [=](int64_t begin, int64_t end) { clippedLinearRange(f, xs, v, begin, end); });
}

void clippedLinearBackward(const ClippedLinear& f, const Tensor& y, const Tensor& dy, Tensor& dx) {
  const float* ys = y.data();
  const float* dys = dy.data();
  float* dxs = dx.data();
  forRange(y.numel(), y.numel(), [=](int64_t begin, int64_t end) {
    clippedLinearBackwardRange(f, ys, dys, dxs, begin, end);
  });
}

void seluBackward(const Tensor& y, const Tensor& dy, Tensor& dx) {
  const float* ys = y.data();
  const float* dys = dy.data();
  float* dxs = dx.data();
  forRange(y.numel(), y.numel(),
           [=](int64_t begin, int64_t end) { seluBackwardRange(ys, dys, dxs, begin, end); });
}

void softmaxForward(const Tensor& x, Tensor& y, bool log) {
  const SoftmaxLines lines(y);
  if (y.numel() == 0) return;
  const float* xs = x.data();
  float* v = y.data();
  const auto line = log ? logSoftmaxLine : softmaxLine;
  forRange(lines.count, y.numel(), [&](int64_t begin, int64_t end) {
    for (int64_t l = begin; l < end; ++l)
      line(xs + lines.start(l), v + lines.start(l), lines.channels, lines.stride);
  });
}

void softmaxBackward(const Tensor& y, const Tensor& dy, Tensor& dx, bool log) {
  const SoftmaxLines lines(y);
  if (y.numel() == 0) return;
  const auto line = log ? logSoftmaxBackwardLine : softmaxBackwardLine;
  forRange(lines.count, y.numel(), [&](int64_t begin, int64_t end) {
    for (int64_t l = begin; l < end; ++l) {
      const int64_t at = lines.start(l);
      line(y.data() + at, dy.data() + at, dx.data() + at, lines.channels, lines.stride);
    }
  });
}

}  // namespace dl4cpp::cpu
