#pragma once
// Batch normalisation on the CPU as plain loops over NCHW (or NC) data: one channel per task, each
// channel's sums in a fixed order (so results do not depend on the thread count), rows of the
// channel's H * W values vectorised for the CPU level that runs (BatchNormRows-inl.h), nothing
// allocated once a thread's buffer for a fused ReLU's gradient has grown to the largest channel.
// A fused ReLU runs the ReLU op's own kernels on each row, so a BN with RELU computes the bits of
// a BN followed by the activation op. oneDNN's primitive for the plain layout
// (ncsp_bnorm) is slower than these loops on the sample's network (`bench_lenet_breakdown --network
// batchnorm`); its fast kernels need the blocked layout, whose reorders would cost more than they
// save.
#include "nn/tensor/Tensor.h"

namespace dl4cpp::cpu {

// The NormalizationOps.h contract of batchNormForwardTraining / Inference / Backward; `relu` for
// the RELU activation.
void batchNormForwardTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                              bool relu, Tensor& y, Tensor& batchMean, Tensor& batchVariance);
void batchNormForwardInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                               const Tensor& mean, const Tensor& variance, float eps, bool relu,
                               Tensor& y);
// dx may be empty; y is read only with `relu`.
void batchNormBackward(const Tensor& x, const Tensor& y, const Tensor& dy, const Tensor& gamma,
                       const Tensor& batchMean, const Tensor& batchVariance, float eps, bool relu,
                       Tensor& dx, Tensor& dgamma, Tensor& dbeta);

}  // namespace dl4cpp::cpu
