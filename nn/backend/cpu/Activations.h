#pragma once
// ReLU, leaky ReLU and softmax for the CPU backend as plain loops: forward in place, backward from
// the activation's output (as oneDNN's *_use_dst_for_bwd algorithms, which they replace). They
// exist because a training step must not allocate, and every oneDNN primitive execution
// heap-allocates its argument map; these allocate nothing. Results do not depend on the thread
// count: every element (every softmax line) is computed by one thread in a fixed order.
// TANH and SIGMOID stay on oneDNN (CpuBackend.cpp): they need vectorised transcendentals, which
// GCC gives plain loops only under -ffast-math.
#include <dl4cpp/nn/tensor/Tensor.h>

#include <cstdint>

namespace dl4cpp::cpu {

// From this many elements the loops split across the OpenMP threads; below it one thread runs
// them, as for fewer elements waking the team costs about what splitting saves (LeNet's dense
// layer, 64000 elements, stays on one thread).
constexpr int64_t kActivationsParallelMinElements = 1 << 17;

// y = y > 0 ? y : 0 (a NaN becomes 0, as in oneDNN).
void reluForward(Tensor& y);

// y = y > 0 ? y : alpha * y. alpha must be >= 0, else a BackendError: backward reads the sign of
// the input from the output, which a negative slope flips (oneDNN refused it too).
void leakyReluForward(float alpha, Tensor& y);

// dx = y > 0 ? dy : alpha * dy, with alpha = 0 for ReLU (so dx = dy * 0 there, as in oneDNN: -0 for
// a negative dy). dx may alias dy. BackendError for a negative alpha, as forward.
void reluBackward(float alpha, const Tensor& y, const Tensor& dy, Tensor& dx);

// Softmax over dimension 1 of a tensor of rank 2 or more (N, C, ...): for each n and each position
// of the trailing dimensions, exp(v - max) / sum over the C values. BackendError for rank < 2.
void softmaxForward(Tensor& y);

// dx = y * (dy - sum_c(dy * y)) over the same lines as forward. dx may alias dy.
void softmaxBackward(const Tensor& y, const Tensor& dy, Tensor& dx);

}  // namespace dl4cpp::cpu
