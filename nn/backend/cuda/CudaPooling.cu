// Max and average pooling, one thread per output element forward and one per input element
// backward (a gather over the windows that cover it: no atomics, deterministic). The index
// arithmetic is in WindowIndexing.h (tested on the host).
//  - MAX ignores padding (as if it held -infinity) and, in training, records the arg-max (the
//    index ih * W + iw within the image plane, the first maximum in window order) in the
//    workspace as int32 bit patterns; backward routes each dy to its window's arg-max.
//  - AVG divides by the number of window elements inside the image (padding excluded, DL4J's and
//    oneDNN's pooling_avg_exclude_padding).
//
// Global pooling: one thread per (n, c) plane forward; backward one thread per input element
// (AVG, SUM, PNORM), or for MAX a cleared gradient and one thread per plane that finds the plane's
// first maximum. The formulas are in GlobalPoolingMath.h (tested on the host).
#include <memory>

#include "nn/backend/cuda/CudaBackend.h"
#include "nn/backend/cuda/CudaCheck.h"
#include "nn/backend/cuda/GlobalPoolingMath.h"
#include "nn/backend/cuda/Launch.h"
#include "nn/backend/cuda/WindowIndexing.h"

namespace dl4cpp::cuda {

class CudaPooling final : public PoolingImpl {
 public:
  explicit CudaPooling(CudaBackend& core) : core_(core) {}
  void poolingForward(PoolingKind kind, const Tensor& x, Tensor& y, const WindowGeometry& g,
                      bool training, Tensor& workspace) override;
  void poolingBackward(PoolingKind kind, const Tensor& dy, Tensor& dx, const WindowGeometry& g,
                       const Tensor& workspace) override;
  void globalPoolingForward(PoolingKind kind, int pnorm, const Tensor& x, Tensor& y) override;
  void globalPoolingBackward(PoolingKind kind, int pnorm, const Tensor& x, const Tensor& y,
                             const Tensor& dy, Tensor& dx) override;

 private:
  CudaBackend& core_;
};

namespace {

PoolShape poolShape(const Shape& x, const Shape& y, const WindowGeometry& g) {
  return {x[0] * x[1], x[2],      x[3],      y[2],     y[3],     g.kernelH,
          g.kernelW,   g.strideH, g.strideW, g.padTop, g.padLeft};
}

__global__ void maxPoolForwardKernel(const float* x, float* y, int* argmax, PoolShape s) {
  const int64_t total = s.planes * s.outH * s.outW;
  DL4CPP_GRID_STRIDE_LOOP(i, total) {
    int where = -1;
    y[i] = maxPoolElement(x, s, i, &where);
    if (argmax) argmax[i] = where;
  }
}

__global__ void avgPoolForwardKernel(const float* x, float* y, PoolShape s) {
  const int64_t total = s.planes * s.outH * s.outW;
  DL4CPP_GRID_STRIDE_LOOP(i, total) y[i] = avgPoolElement(x, s, i);
}

// argmax == nullptr: AVG.
__global__ void poolBackwardKernel(const float* dy, float* dx, const int* argmax, PoolShape s) {
  const int64_t total = s.planes * s.height * s.width;
  DL4CPP_GRID_STRIDE_LOOP(i, total) dx[i] = poolBackwardElement(dy, argmax, s, i);
}

}  // namespace

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

void CudaPooling::poolingForward(PoolingKind kind, const Tensor& x, Tensor& y,
                                 const WindowGeometry& g, bool training, Tensor& workspace) {
  const PoolShape s = poolShape(x.shape(), y.shape(), g);
  const int64_t total = y.numel();
  if (total == 0) return;
  if (kind == PoolingKind::AVG) {
    avgPoolForwardKernel<<<blocksFor(total), kThreadsPerBlock, 0, core_.stream_>>>(x.data(),
                                                                                   y.data(), s);
    DL4CPP_CUDA_CHECK_LAUNCH();
    return;
  }
  int* argmax = nullptr;
  if (training) {  // one int32 per output element, in the layer's float workspace
    if (workspace.numel() < total || workspace.device() != Device::cuda(core_.device_))
      workspace = Tensor(Shape{total}, Device::cuda(core_.device_));
    argmax = reinterpret_cast<int*>(workspace.data());
  }
  maxPoolForwardKernel<<<blocksFor(total), kThreadsPerBlock, 0, core_.stream_>>>(x.data(), y.data(),
                                                                                 argmax, s);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaPooling::poolingBackward(PoolingKind kind, const Tensor& dy, Tensor& dx,
                                  const WindowGeometry& g, const Tensor& workspace) {
  const PoolShape s = poolShape(dx.shape(), dy.shape(), g);
  const bool max = kind == PoolingKind::MAX;
  if (max && (workspace.numel() < dy.numel() || workspace.device() != Device::cuda(core_.device_)))
    throw BackendError(
        "poolingBackward: MAX pooling needs the workspace of a training-mode "
        "poolingForward with the same shapes; run forward(training=true) first");
  const int64_t total = dx.numel();
  if (total == 0) return;
  const int* argmax = max ? reinterpret_cast<const int*>(workspace.data()) : nullptr;
  poolBackwardKernel<<<blocksFor(total), kThreadsPerBlock, 0, core_.stream_>>>(dy.data(), dx.data(),
                                                                               argmax, s);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaPooling::globalPoolingForward(PoolingKind kind, int pnorm, const Tensor& x, Tensor& y) {
  const int64_t planes = x.dim(0) * x.dim(1), area = x.dim(2) * x.dim(3);
  if (planes == 0) return;
  globalPoolForwardKernel<<<blocksFor(planes), kThreadsPerBlock, 0, core_.stream_>>>(
      kind, pnorm, x.data(), y.data(), planes, area);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaPooling::globalPoolingBackward(PoolingKind kind, int pnorm, const Tensor& x,
                                        const Tensor& y, const Tensor& dy, Tensor& dx) {
  const int64_t planes = x.dim(0) * x.dim(1), area = x.dim(2) * x.dim(3), total = x.numel();
  if (total == 0) return;
  if (kind == PoolingKind::MAX) {
    DL4CPP_CUDA_CHECK(
        cudaMemsetAsync(dx.data(), 0, static_cast<size_t>(total) * sizeof(float), core_.stream_));
    globalMaxBackwardKernel<<<blocksFor(planes), kThreadsPerBlock, 0, core_.stream_>>>(
        x.data(), y.data(), dy.data(), dx.data(), planes, area);
  } else {
    globalPoolBackwardKernel<<<blocksFor(total), kThreadsPerBlock, 0, core_.stream_>>>(
        kind, pnorm, x.data(), y.data(), dy.data(), dx.data(), total, area);
  }
  DL4CPP_CUDA_CHECK_LAUNCH();
}

std::unique_ptr<PoolingImpl> makeCudaPooling(CudaBackend& core) {
  return std::make_unique<CudaPooling>(core);
}

}  // namespace dl4cpp::cuda
