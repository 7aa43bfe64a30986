// Local response normalisation across channels: one thread per element forward and backward, each
// summing its channel window. The formulas and the workspace layout (scale, then scale / u, one
// float each per element, as on the CPU) are in LrnMath.h (tested on the host).
#include "nn/backend/cuda/CudaBackend.h"
#include "nn/backend/cuda/CudaCheck.h"
#include "nn/backend/cuda/Launch.h"
#include "nn/backend/cuda/LrnMath.h"

namespace dl4cpp::cuda {

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

void CudaBackend::lrnForward(const LrnParams& p, const Tensor& x, Tensor& y, bool training,
                             Tensor& workspace) {
  const int64_t total = x.numel();
  if (total == 0) return;
  float* scale = nullptr;
  if (training) {
    if (workspace.numel() < 2 * total || workspace.device() != Device::cuda(device_))
      workspace = Tensor(Shape{2 * total}, Device::cuda(device_));
    scale = workspace.data();
  }
  lrnForwardKernel<<<blocksFor(total), kThreadsPerBlock, 0, stream_>>>(
      x.data(), y.data(), scale, scale == nullptr ? nullptr : scale + total, lrnShape(p, x.shape()),
      total);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaBackend::lrnBackward(const LrnParams& p, const Tensor& x, const Tensor& dy, Tensor& dx,
                              const Tensor& workspace) {
  const int64_t total = x.numel();
  if (workspace.numel() < 2 * total || workspace.device() != Device::cuda(device_))
    throw BackendError(
        "lrnBackward: needs the workspace of a training-mode lrnForward with the same shapes; "
        "run forward(training=true) first");
  if (total == 0) return;
  lrnBackwardKernel<<<blocksFor(total), kThreadsPerBlock, 0, stream_>>>(
      x.data(), dy.data(), workspace.data(), workspace.data() + total, dx.data(),
      lrnShape(p, x.shape()), total);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

}  // namespace dl4cpp::cuda
