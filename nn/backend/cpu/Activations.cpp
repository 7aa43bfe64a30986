#include <dl4cpp/nn/Error.h>
#include <dl4cpp/nn/backend/cpu/Activations.h>
#include <dl4cpp/nn/backend/cpu/ParallelFor.h>

#include <algorithm>
#include <cmath>
#include <string>

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

// Softmax runs along dimension 1 of (N, C, rest...): N * rest lines of C values, `stride` = rest
// apart (1 for the (N, C) of a dense or output layer).
struct SoftmaxLines {
  int64_t count, channels, stride;

  explicit SoftmaxLines(const Tensor& y) {
    if (y.rank() < 2)
      throw BackendError("softmax runs over dimension 1 and needs rank >= 2, got shape " +
                         y.shape().toString());
    channels = y.dim(1);
    stride = y.numel() / std::max<int64_t>(y.dim(0) * channels, 1);
    count = y.dim(0) * stride;
  }
  int64_t start(int64_t line) const { return line / stride * channels * stride + line % stride; }
};

void softmaxLine(float* v, int64_t channels, int64_t stride) {
  float largest = v[0];
  for (int64_t c = 1; c < channels; ++c) largest = std::max(largest, v[c * stride]);
  float sum = 0.0f;
  for (int64_t c = 0; c < channels; ++c) {
    const float e = std::exp(v[c * stride] - largest);  // <= 1: no overflow for large inputs
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

// The element loops over [begin, end) get their pointers and slope as arguments (see
// parallelRanges): read through the lambda's captures, they would keep GCC from vectorising.
void reluRange(float* v, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) v[i] = v[i] > 0.0f ? v[i] : 0.0f;
}

void leakyReluRange(float alpha, float* v, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) v[i] = v[i] > 0.0f ? v[i] : alpha * v[i];
}

void reluBackwardRange(float alpha, const float* y, const float* dy, float* dx, int64_t begin,
                       int64_t end) {
  // The analyzer takes the null branch of dx.data() in reluBackward (a tensor without storage)
  // with y's elements as the bound: dx has y's shape (Backend::activationBackward), so that path
  // cannot happen.
  // NOLINTNEXTLINE(clang-analyzer-core.NullDereference)
  for (int64_t i = begin; i < end; ++i) dx[i] = y[i] > 0.0f ? dy[i] : alpha * dy[i];
}

}  // namespace

void reluForward(Tensor& y) {
  float* v = y.data();
  forRange(y.numel(), y.numel(), [=](int64_t begin, int64_t end) { reluRange(v, begin, end); });
}

void leakyReluForward(float alpha, Tensor& y) {
  requireNonNegativeSlope(alpha);
  float* v = y.data();
  forRange(y.numel(), y.numel(),
           [=](int64_t begin, int64_t end) { leakyReluRange(alpha, v, begin, end); });
}

void reluBackward(float alpha, const Tensor& y, const Tensor& dy, Tensor& dx) {
  requireNonNegativeSlope(alpha);
  const float* ys = y.data();
  const float* dys = dy.data();
  float* dxs = dx.data();
  forRange(y.numel(), y.numel(),
           [=](int64_t begin, int64_t end) { reluBackwardRange(alpha, ys, dys, dxs, begin, end); });
}

void softmaxForward(Tensor& y) {
  const SoftmaxLines lines(y);
  if (y.numel() == 0) return;
  float* v = y.data();
  forRange(lines.count, y.numel(), [&](int64_t begin, int64_t end) {
    for (int64_t l = begin; l < end; ++l)
      softmaxLine(v + lines.start(l), lines.channels, lines.stride);
  });
}

void softmaxBackward(const Tensor& y, const Tensor& dy, Tensor& dx) {
  const SoftmaxLines lines(y);
  if (y.numel() == 0) return;
  forRange(lines.count, y.numel(), [&](int64_t begin, int64_t end) {
    for (int64_t l = begin; l < end; ++l) {
      const int64_t at = lines.start(l);
      softmaxBackwardLine(y.data() + at, dy.data() + at, dx.data() + at, lines.channels,
                          lines.stride);
    }
  });
}

}  // namespace dl4cpp::cpu
