// The CUDA backend's normalisation family (ops/NormalizationOps.h).
//
// Batch normalisation. Per-channel
// statistics and gradient sums take one block per channel, each thread summing a strided share in
// double and the block combining the shares in a fixed tree: deterministic, no atomics. The
// formulas are in BatchNormMath.h and CounterRandom.h (tested on the host).
//
// Local response normalisation across channels: one thread per element forward and backward, each
// summing its channel window. The formulas and the workspace layout (scale, then scale / u, one
// float each per element, as on the CPU) are in LrnMath.h (tested on the host).
#include <memory>

#include "nn/backend/cuda/BatchNormMath.h"
#include "nn/backend/cuda/BlockSum.h"
#include "nn/backend/cuda/CudaBackend.h"
#include "nn/backend/cuda/CudaCheck.h"
#include "nn/backend/cuda/Launch.h"
#include "nn/backend/cuda/LrnMath.h"

namespace dl4cpp::cuda {

class CudaNormalization final : public NormalizationImpl {
 public:
  explicit CudaNormalization(CudaBackend& core) : core_(core) {}
  void batchNormForwardTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                                ActivationKind activation, Tensor& y, Tensor& batchMean,
                                Tensor& batchVariance) override;
  void batchNormForwardInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                 const Tensor& mean, const Tensor& variance, float eps,
                                 ActivationKind activation, Tensor& y) override;
  // Masks with y as given; beta is not read.
  void batchNormBackward(const Tensor& x, const Tensor& y, const Tensor& dy, const Tensor& gamma,
                         const Tensor& beta, const Tensor& batchMean, const Tensor& batchVariance,
                         float eps, ActivationKind activation, Tensor& dx, Tensor& dgamma,
                         Tensor& dbeta) override;
  void lrnForward(const LrnParams& p, const Tensor& x, Tensor& y, bool training,
                  Tensor& workspace) override;
  void lrnBackward(const LrnParams& p, const Tensor& x, const Tensor& dy, Tensor& dx,
                   const Tensor& workspace) override;

 private:
  CudaBackend& core_;
};

namespace {

BatchNormShape batchNormShape(const Tensor& x) {
  const int64_t n = x.dim(0), c = x.dim(1);
  return {n, c, x.numel() / (n * c)};
}

// Block c: mean and population variance of channel c (two passes: the mean, then the squared
// deviations from it).
__global__ void channelMomentsKernel(const float* x, BatchNormShape s, float* mean,
                                     float* variance) {
  __shared__ double shared[kThreadsPerBlock];
  const int64_t c = blockIdx.x, m = s.perChannel();
  double sum = 0;
  for (int64_t j = threadIdx.x; j < m; j += blockDim.x) sum += x[s.index(c, j)];
  const double mu = blockSum(sum, shared) / double(m);
  double squares = 0;
  for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
    const double d = double(x[s.index(c, j)]) - mu;
    squares += d * d;
  }
  const double var = blockSum(squares, shared) / double(m);
  if (threadIdx.x == 0) {
    mean[c] = static_cast<float>(mu);
    variance[c] = static_cast<float>(var);
  }
}

__global__ void normalizeKernel(const float* x, BatchNormShape s, const float* gamma,
                                const float* beta, const float* mean, const float* variance,
                                float eps, bool relu, float* y) {
  const int64_t total = s.batch * s.channels * s.spatial;
  DL4CPP_GRID_STRIDE_LOOP(i, total) {
    const int64_t c = s.channelOf(i);
    const float v =
        batchNormElement(x[i], mean[c], inverseStd(variance[c], eps), gamma[c], beta[c]);
    y[i] = relu ? fusedRelu(v) : v;
  }
}

// The gradient of the normalised value at i: dy, or with a fused ReLU (y not null) dy where y > 0.
__device__ inline float normalizedGradient(const float* y, const float* dy, int64_t i) {
  return y == nullptr ? dy[i] : fusedReluGradient(y[i], dy[i]);
}

// Block c: dbeta[c] = sum g, dgamma[c] = sum g * xhat over channel c, g = normalizedGradient.
__global__ void channelGradientSumsKernel(const float* x, const float* y, const float* dy,
                                          BatchNormShape s, const float* mean,
                                          const float* variance, float eps, float* dgamma,
                                          float* dbeta) {
  __shared__ double shared[kThreadsPerBlock];
  const int64_t c = blockIdx.x, m = s.perChannel();
  const float mu = mean[c], invStd = inverseStd(variance[c], eps);
  double sumDy = 0, sumDyXhat = 0;
  for (int64_t j = threadIdx.x; j < m; j += blockDim.x) {
    const int64_t i = s.index(c, j);
    const float g = normalizedGradient(y, dy, i);
    sumDy += g;
    sumDyXhat += double(g) * double((x[i] - mu) * invStd);
  }
  const double totalDy = blockSum(sumDy, shared);
  const double totalDyXhat = blockSum(sumDyXhat, shared);
  if (threadIdx.x == 0) {
    dbeta[c] = static_cast<float>(totalDy);
    dgamma[c] = static_cast<float>(totalDyXhat);
  }
}

__global__ void batchNormInputGradientKernel(const float* x, const float* y, const float* dy,
                                             BatchNormShape s, const float* gamma,
                                             const float* mean, const float* variance, float eps,
                                             const float* dgamma, const float* dbeta, float* dx) {
  const int64_t total = s.batch * s.channels * s.spatial;
  DL4CPP_GRID_STRIDE_LOOP(i, total) {
    const int64_t c = s.channelOf(i);
    const float invStd = inverseStd(variance[c], eps);
    dx[i] = batchNormInputGradient(normalizedGradient(y, dy, i), (x[i] - mean[c]) * invStd,
                                   gamma[c], invStd, dbeta[c], dgamma[c], s.perChannel());
  }
}

}  // namespace

namespace {

LrnShape lrnShape(const LrnParams& p, const Shape& x) { return {x[1], x[2] * x[3], p}; }

// scale == nullptr: inference, no workspace.
__global__ void lrnForwardKernel(const float* x, float* y, float* scale, float* scaleOverU,
                                 LrnShape s, int64_t total) {
  DL4CPP_GRID_STRIDE_LOOP(i, total) y[i] = lrnForwardElement(x, s, i, scale, scaleOverU);
}

__global__ void lrnBackwardKernel(const float* x, const float* dy, const float* scale,
                                  const float* scaleOverU, float* dx, LrnShape s, int64_t total) {
  DL4CPP_GRID_STRIDE_LOOP(i, total) dx[i] = lrnBackwardElement(x, dy, scale, scaleOverU, s, i);
}

}  // namespace

void CudaNormalization::batchNormForwardTraining(const Tensor& x, const Tensor& gamma,
                                                 const Tensor& beta, float eps,
                                                 ActivationKind activation, Tensor& y,
                                                 Tensor& batchMean, Tensor& batchVariance) {
  if (x.numel() == 0) return;
  const BatchNormShape s = batchNormShape(x);
  channelMomentsKernel<<<static_cast<unsigned>(s.channels), kThreadsPerBlock, 0, core_.stream_>>>(
      x.data(), s, batchMean.data(), batchVariance.data());
  DL4CPP_CUDA_CHECK_LAUNCH();
  batchNormForwardInference(x, gamma, beta, batchMean, batchVariance, eps, activation, y);
}

void CudaNormalization::batchNormForwardInference(const Tensor& x, const Tensor& gamma,
                                                  const Tensor& beta, const Tensor& mean,
                                                  const Tensor& variance, float eps,
                                                  ActivationKind activation, Tensor& y) {
  const int64_t n = x.numel();
  if (n == 0) return;
  normalizeKernel<<<blocksFor(n), kThreadsPerBlock, 0, core_.stream_>>>(
      x.data(), batchNormShape(x), gamma.data(), beta.data(), mean.data(), variance.data(), eps,
      activation == ActivationKind::RELU, y.data());
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaNormalization::batchNormBackward(const Tensor& x, const Tensor& y, const Tensor& dy,
                                          const Tensor& gamma, const Tensor& /*beta*/,
                                          const Tensor& batchMean, const Tensor& batchVariance,
                                          float eps, ActivationKind activation, Tensor& dx,
                                          Tensor& dgamma, Tensor& dbeta) {
  const int64_t n = x.numel();
  if (n == 0) return;
  const BatchNormShape s = batchNormShape(x);
  const float* ys = activation == ActivationKind::RELU ? y.data() : nullptr;
  channelGradientSumsKernel<<<static_cast<unsigned>(s.channels), kThreadsPerBlock, 0,
                              core_.stream_>>>(x.data(), ys, dy.data(), s, batchMean.data(),
                                               batchVariance.data(), eps, dgamma.data(),
                                               dbeta.data());
  DL4CPP_CUDA_CHECK_LAUNCH();
  if (dx.empty()) return;
  batchNormInputGradientKernel<<<blocksFor(n), kThreadsPerBlock, 0, core_.stream_>>>(
      x.data(), ys, dy.data(), s, gamma.data(), batchMean.data(), batchVariance.data(), eps,
      dgamma.data(), dbeta.data(), dx.data());
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaNormalization::lrnForward(const LrnParams& p, const Tensor& x, Tensor& y, bool training,
                                   Tensor& workspace) {
  const int64_t total = x.numel();
  if (total == 0) return;
  float* scale = nullptr;
  if (training) {
    if (workspace.numel() < 2 * total || workspace.device() != Device::cuda(core_.device_))
      workspace = Tensor(Shape{2 * total}, Device::cuda(core_.device_));
    scale = workspace.data();
  }
  lrnForwardKernel<<<blocksFor(total), kThreadsPerBlock, 0, core_.stream_>>>(
      x.data(), y.data(), scale, scale == nullptr ? nullptr : scale + total, lrnShape(p, x.shape()),
      total);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaNormalization::lrnBackward(const LrnParams& p, const Tensor& x, const Tensor& dy,
                                    Tensor& dx, const Tensor& workspace) {
  const int64_t total = x.numel();
  if (workspace.numel() < 2 * total || workspace.device() != Device::cuda(core_.device_))
    throw BackendError(
        "lrnBackward: needs the workspace of a training-mode lrnForward with the same shapes; "
        "run forward(training=true) first");
  if (total == 0) return;
  lrnBackwardKernel<<<blocksFor(total), kThreadsPerBlock, 0, core_.stream_>>>(
      x.data(), dy.data(), workspace.data(), workspace.data() + total, dx.data(),
      lrnShape(p, x.shape()), total);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

std::unique_ptr<NormalizationImpl> makeCudaNormalization(CudaBackend& core) {
  return std::make_unique<CudaNormalization>(core);
}

}  // namespace dl4cpp::cuda
