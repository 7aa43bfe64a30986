// Global pooling: one thread per (n, c) plane forward; backward one thread per input element
// (AVG, SUM, PNORM), or for MAX a cleared gradient and one thread per plane that finds the plane's
// first maximum. The formulas are in GlobalPoolingMath.h (tested on the host).
#include "nn/backend/cuda/CudaBackend.h"
#include "nn/backend/cuda/CudaCheck.h"
#include "nn/backend/cuda/GlobalPoolingMath.h"
#include "nn/backend/cuda/Launch.h"

namespace dl4cpp::cuda {

namespace {

__global__ void globalPoolForwardKernel(PoolingKind kind, int pnorm, const float* x, float* y,
                                        int64_t planes, int64_t area) {
  DL4CPP_GRID_STRIDE_LOOP(p, planes) y[p] = globalPoolPlane(kind, pnorm, x + p * area, area);
}

__global__ void globalMaxBackwardKernel(const float* x, const float* y, const float* dy, float* dx,
                                        int64_t planes, int64_t area) {
  DL4CPP_GRID_STRIDE_LOOP(p, planes) {
    const int64_t at = firstIndexOf(x + p * area, area, y[p]);
    if (at >= 0) dx[p * area + at] = dy[p];
  }
}

__global__ void globalPoolBackwardKernel(PoolingKind kind, int pnorm, const float* x,
                                         const float* y, const float* dy, float* dx, int64_t total,
                                         int64_t area) {
  DL4CPP_GRID_STRIDE_LOOP(i, total) {
    const int64_t p = i / area;
    dx[i] = globalPoolBackwardElement(kind, pnorm, x[i], y[p], dy[p], area);
  }
}

}  // namespace

void CudaBackend::globalPoolingForward(PoolingKind kind, int pnorm, const Tensor& x, Tensor& y) {
  const int64_t planes = x.dim(0) * x.dim(1), area = x.dim(2) * x.dim(3);
  if (planes == 0) return;
  globalPoolForwardKernel<<<blocksFor(planes), kThreadsPerBlock, 0, stream_>>>(
      kind, pnorm, x.data(), y.data(), planes, area);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaBackend::globalPoolingBackward(PoolingKind kind, int pnorm, const Tensor& x,
                                        const Tensor& y, const Tensor& dy, Tensor& dx) {
  const int64_t planes = x.dim(0) * x.dim(1), area = x.dim(2) * x.dim(3), total = x.numel();
  if (total == 0) return;
  if (kind == PoolingKind::MAX) {
    DL4CPP_CUDA_CHECK(
        cudaMemsetAsync(dx.data(), 0, static_cast<size_t>(total) * sizeof(float), stream_));
    globalMaxBackwardKernel<<<blocksFor(planes), kThreadsPerBlock, 0, stream_>>>(
        x.data(), y.data(), dy.data(), dx.data(), planes, area);
  } else {
    globalPoolBackwardKernel<<<blocksFor(total), kThreadsPerBlock, 0, stream_>>>(
        kind, pnorm, x.data(), y.data(), dy.data(), dx.data(), total, area);
  }
  DL4CPP_CUDA_CHECK_LAUNCH();
}

}  // namespace dl4cpp::cuda
