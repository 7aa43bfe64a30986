// The CUDA backend's ops that only move data: copies on the compute stream and zero padding (one
// thread per output element) and its reverse, the crop of the gradient (one per input element).
// The index arithmetic is in PaddingMath.h (tested on the host).
#include "nn/backend/cuda/CudaBackend.h"
#include "nn/backend/cuda/CudaCheck.h"
#include "nn/backend/cuda/Launch.h"
#include "nn/backend/cuda/PaddingMath.h"

namespace dl4cpp::cuda {

namespace {

__global__ void padKernel(const float* x, float* y, PaddingShape s, int64_t total) {
  DL4CPP_GRID_STRIDE_LOOP(i, total) y[i] = paddedElement(x, s, i);
}

__global__ void cropKernel(const float* dy, float* dx, PaddingShape s, int64_t total) {
  DL4CPP_GRID_STRIDE_LOOP(i, total) dx[i] = croppedElement(dy, s, i);
}

}  // namespace

void CudaBackend::zeroPaddingForward(const Tensor& x, Tensor& y, const Padding2d& p) {
  const int64_t total = y.numel();
  if (total == 0) return;
  padKernel<<<blocksFor(total), kThreadsPerBlock, 0, stream_>>>(
      x.data(), y.data(), PaddingShape{x.dim(2), x.dim(3), p}, total);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaBackend::zeroPaddingBackward(const Tensor& dy, Tensor& dx, const Padding2d& p) {
  const int64_t total = dx.numel();
  if (total == 0) return;
  cropKernel<<<blocksFor(total), kThreadsPerBlock, 0, stream_>>>(
      dy.data(), dx.data(), PaddingShape{dx.dim(2), dx.dim(3), p}, total);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaBackend::copy(const Tensor& src, Tensor& dst) {
  if (src.numel() == 0) return;
  DL4CPP_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(),
                                    static_cast<size_t>(src.numel()) * sizeof(float),
                                    cudaMemcpyDeviceToDevice, stream_));
}

}  // namespace dl4cpp::cuda
