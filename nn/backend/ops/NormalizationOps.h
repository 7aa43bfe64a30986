#pragma once
// The normalisation family: batch normalisation and local response normalisation.
// NormalizationImpl is what a device implements (cpu/CpuNormalization.cpp,
// cuda/CudaNormalization.cu); NormalizationOps is what layers call, through Backend.
#include "nn/backend/OpTypes.h"
#include "nn/backend/ops/OpDispatch.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp {

class NormalizationImpl {
 public:
  virtual ~NormalizationImpl() = default;
  // Per channel c of x (N, C, H, W), statistics over N, H and W; per feature c of x (N, C), over
  // N. gamma, beta, mean and variance are (C); variances are population variances. `activation`
  // (IDENTITY or RELU, checked by NormalizationOps) is applied to the normalised values in the
  // same pass: a BN followed by a ReLU reads and writes its activations once, not twice.
  // Training: writes the batch's mean and variance and
  // y = f(gamma (x - mean) / sqrt(var + eps) + beta).
  virtual void batchNormForwardTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                        float eps, ActivationKind activation, Tensor& y,
                                        Tensor& batchMean, Tensor& batchVariance) = 0;
  // Inference: the same with the given (running) mean and variance.
  virtual void batchNormForwardInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                         const Tensor& mean, const Tensor& variance, float eps,
                                         ActivationKind activation, Tensor& y) = 0;
  // dx, dgamma, dbeta from x, dy (the gradient of y), gamma, beta and the batch statistics its
  // training forward wrote; with RELU the gradient flows where that forward pass's output y was
  // positive. y is that output (empty with IDENTITY); a device may instead make it again from x,
  // gamma, beta and the statistics, as the forward pass did (the CPU backend, with the same loops
  // and so the same bits: reading y costs more than computing it). dx may be empty when only
  // dgamma and dbeta are wanted.
  virtual void batchNormBackward(const Tensor& x, const Tensor& y, const Tensor& dy,
                                 const Tensor& gamma, const Tensor& beta, const Tensor& batchMean,
                                 const Tensor& batchVariance, float eps, ActivationKind activation,
                                 Tensor& dx, Tensor& dgamma, Tensor& dbeta) = 0;
  // x, y (N, C, H, W): LrnParams' normalisation. A training-mode pass records in `workspace`
  // (the calling layer's, sized by the backend) what lrnBackward reads.
  virtual void lrnForward(const LrnParams& p, const Tensor& x, Tensor& y, bool training,
                          Tensor& workspace) = 0;
  // dx from dy, the forward pass's x and its training-mode workspace.
  virtual void lrnBackward(const LrnParams& p, const Tensor& x, const Tensor& dy, Tensor& dx,
                           const Tensor& workspace) = 0;
};

// Whether batch normalisation applies `activation` itself (NormalizationImpl).
constexpr bool batchNormFuses(ActivationKind activation) {
  return activation == ActivationKind::IDENTITY || activation == ActivationKind::RELU;
}

// The checks NormalizationOps makes before any device runs an op.
namespace detail {
// BackendError unless batchNormFuses(activation).
void checkBatchNormActivation(ActivationKind activation);
// That, and ShapeError where RELU's backward pass lacks a y shaped as x.
void checkBatchNormOutput(ActivationKind activation, const Tensor& x, const Tensor& y);
}  // namespace detail

class NormalizationOps : protected OpFamily<NormalizationImpl> {
 public:
  void batchNormForwardTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                                ActivationKind activation, Tensor& y, Tensor& batchMean,
                                Tensor& batchVariance) {
    detail::checkBatchNormActivation(activation);
    run(OpPhase::FORWARD, [&] {
      impl().batchNormForwardTraining(x, gamma, beta, eps, activation, y, batchMean, batchVariance);
    });
  }
  void batchNormForwardInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                 const Tensor& mean, const Tensor& variance, float eps,
                                 ActivationKind activation, Tensor& y) {
    detail::checkBatchNormActivation(activation);
    run(OpPhase::FORWARD, [&] {
      impl().batchNormForwardInference(x, gamma, beta, mean, variance, eps, activation, y);
    });
  }
  void batchNormBackward(const Tensor& x, const Tensor& y, const Tensor& dy, const Tensor& gamma,
                         const Tensor& beta, const Tensor& batchMean, const Tensor& batchVariance,
                         float eps, ActivationKind activation, Tensor& dx, Tensor& dgamma,
                         Tensor& dbeta) {
    detail::checkBatchNormOutput(activation, x, y);
    run(OpPhase::BACKWARD_DATA, [&] {
      impl().batchNormBackward(x, y, dy, gamma, beta, batchMean, batchVariance, eps, activation, dx,
                               dgamma, dbeta);
    });
  }
  void lrnForward(const LrnParams& p, const Tensor& x, Tensor& y, bool training,
                  Tensor& workspace) {
    run(OpPhase::FORWARD, [&] { impl().lrnForward(p, x, y, training, workspace); });
  }
  void lrnBackward(const LrnParams& p, const Tensor& x, const Tensor& dy, Tensor& dx,
                   const Tensor& workspace) {
    run(OpPhase::BACKWARD_DATA, [&] { impl().lrnBackward(p, x, dy, dx, workspace); });
  }
};

}  // namespace dl4cpp
