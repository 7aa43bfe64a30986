#pragma once
// The activations without transcendentals, for the CPU backend as plain loops: ReLU, leaky ReLU,
// the clipped linear ones (HARDTANH, HARDSIGMOID, RELU6) and softmax, forward (y may alias x) and
// backward from the activation's output (as oneDNN's *_use_dst_for_bwd algorithms, which they
// replace), and SELU's backward pass. They exist because a training step must not allocate, and
// every oneDNN primitive execution heap-allocates its argument map; these allocate nothing.
// Results do not depend on the thread count: every element (every softmax line) is computed by one
// thread in a fixed order. The activations that need exp or tanh stay on oneDNN (CpuBackend.cpp):
// they need vectorised transcendentals, which GCC gives plain loops only under -ffast-math.
#include <cstdint>

#include "nn/backend/OpTypes.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::cpu {

// From this many elements the loops split across the OpenMP threads; below it one thread runs
// them, as for fewer elements waking the team costs about what splitting saves (LeNet's dense
// layer, 64000 elements, stays on one thread).
constexpr int64_t kActivationsParallelMinElements = 1 << 17;

// y = x > 0 ? x : 0 (a NaN becomes 0, as in oneDNN). y may alias x, here and below.
void reluForward(const Tensor& x, Tensor& y);

// y = x > 0 ? x : alpha * x. alpha must be >= 0, else a BackendError: backward reads the sign of
// the input from the output, which a negative slope flips (oneDNN refused it too).
void leakyReluForward(float alpha, const Tensor& x, Tensor& y);

// dx = y > 0 ? dy : alpha * dy, with alpha = 0 for ReLU (so dx = dy * 0 there, as in oneDNN: -0 for
// a negative dy). dx may alias dy. BackendError for a negative alpha, as forward.
void reluBackward(float alpha, const Tensor& y, const Tensor& dy, Tensor& dx);

// An activation a fused kernel applies to a buffer of its own output on the calling thread, while
// the buffer is in cache (ConvolutionPooling.h): IDENTITY, RELU or LEAKYRELU, with the bits of
// reluForward and leakyReluForward.
struct FusedActivation {
  ActivationKind kind = ActivationKind::IDENTITY;
  float alpha = 0.0f;  // LEAKYRELU's slope, >= 0
};
// Whether `kind` is one FusedActivation takes.
bool fusableActivation(ActivationKind kind);
// BackendError naming `op` for another activation or a negative slope: what callers check before
// their kernels run.
void checkFusedActivation(const FusedActivation& f, const char* op);
// v[0, n) = f(v[0, n)), on the calling thread, for an f that checkFusedActivation accepts.
void applyFusedActivation(const FusedActivation& f, float* v, int64_t n);
// dx[0, n) = f'(y) * dy[0, n) from f's output y, on the calling thread, with the bits of
// reluBackward (a copy for the identity).
void applyFusedActivationBackward(const FusedActivation& f, const float* y, const float* dy,
                                  float* dx, int64_t n);

// y = min(max(scale * x + shift, low), high): HARDTANH, HARDSIGMOID and RELU6 (clippedLinear()).
struct ClippedLinear {
  float scale, shift, low, high;
};
// The ClippedLinear that is `kind`, or BackendError for an activation that is none.
ClippedLinear clippedLinear(ActivationKind kind);
void clippedLinearForward(const ClippedLinear& f, const Tensor& x, Tensor& y);
// dx = low < y < high ? scale * dy : 0. dx may alias dy.
void clippedLinearBackward(const ClippedLinear& f, const Tensor& y, const Tensor& dy, Tensor& dx);

// SELU's dx = (y > 0 ? lambda : y + lambda * alpha) * dy (its derivative, from its output). dx may
// alias dy.
void seluBackward(const Tensor& y, const Tensor& dy, Tensor& dx);

// Softmax over dimension 1 of a tensor of rank 2 or more (N, C, ...): for each n and each position
// of the trailing dimensions, exp(v - max) / sum over the C values; with `log`, its logarithm
// v - max - log(sum exp(v - max)) (LOGSOFTMAX). BackendError for rank < 2.
void softmaxForward(const Tensor& x, Tensor& y, bool log = false);

// dx = y * (dy - sum_c(dy * y)) over the same lines as forward; with `log`, dx = dy - exp(y) *
// sum_c(dy). dx may alias dy.
void softmaxBackward(const Tensor& y, const Tensor& dy, Tensor& dx, bool log = false);

}  // namespace dl4cpp::cpu
