// Max and average pooling, one thread per output element forward and one per input element
// backward (a gather over the windows that cover it: no atomics, deterministic).
//  - MAX ignores padding (as if it held -infinity) and, in training, records the arg-max (the
//    index ih * W + iw within the image plane, the first maximum in window order) in the
//    workspace as int32 bit patterns; backward routes each dy to its window's arg-max.
//  - AVG divides by the number of window elements inside the image (padding excluded, DL4J's and
//    oneDNN's pooling_avg_exclude_padding).
#include <dl4cpp/nn/backend/cuda/CudaBackend.h>

#include <cfloat>

#include <dl4cpp/nn/backend/cuda/CudaCheck.h>
#include <dl4cpp/nn/backend/cuda/Launch.h>

namespace dl4cpp::cuda {

namespace {

struct PoolShape {
  int64_t planes;  // N * C
  int64_t height, width, outH, outW;
  int64_t kH, kW, sH, sW, padTop, padLeft;
};

PoolShape poolShape(const Shape& x, const Shape& y, const WindowGeometry& g) {
  return {x[0] * x[1], x[2], x[3], y[2], y[3], g.kernelH, g.kernelW, g.strideH, g.strideW,
          g.padTop, g.padLeft};
}

// The window of output (oh, ow) clipped to the image: rows [h0, h1), columns [w0, w1).
struct Window {
  int64_t h0, h1, w0, w1;
};
__device__ Window clippedWindow(const PoolShape& s, int64_t oh, int64_t ow) {
  const int64_t hs = oh * s.sH - s.padTop, ws = ow * s.sW - s.padLeft;
  return {hs < 0 ? 0 : hs, hs + s.kH < s.height ? hs + s.kH : s.height,
          ws < 0 ? 0 : ws, ws + s.kW < s.width ? ws + s.kW : s.width};
}

__global__ void maxPoolForwardKernel(const float* x, float* y, int* argmax, PoolShape s) {
  const int64_t total = s.planes * s.outH * s.outW;
  DL4CPP_GRID_STRIDE_LOOP(i, total) {
    const int64_t ow = i % s.outW, oh = (i / s.outW) % s.outH, plane = i / (s.outW * s.outH);
    const float* image = x + plane * s.height * s.width;
    const Window win = clippedWindow(s, oh, ow);
    float best = -FLT_MAX;
    int64_t where = -1;
    for (int64_t h = win.h0; h < win.h1; ++h)
      for (int64_t w = win.w0; w < win.w1; ++w) {
        const float v = image[h * s.width + w];
        if (where < 0 || v > best) {  // strict: the first maximum wins
          best = v;
          where = h * s.width + w;
        }
      }
    y[i] = best;
    if (argmax) argmax[i] = static_cast<int>(where);
  }
}

__global__ void avgPoolForwardKernel(const float* x, float* y, PoolShape s) {
  const int64_t total = s.planes * s.outH * s.outW;
  DL4CPP_GRID_STRIDE_LOOP(i, total) {
    const int64_t ow = i % s.outW, oh = (i / s.outW) % s.outH, plane = i / (s.outW * s.outH);
    const float* image = x + plane * s.height * s.width;
    const Window win = clippedWindow(s, oh, ow);
    float sum = 0.0f;
    for (int64_t h = win.h0; h < win.h1; ++h)
      for (int64_t w = win.w0; w < win.w1; ++w) sum += image[h * s.width + w];
    const int64_t count = (win.h1 - win.h0) * (win.w1 - win.w0);
    y[i] = count > 0 ? sum / static_cast<float>(count) : 0.0f;
  }
}

// Output rows whose window covers input row `in`: oh * stride - pad <= in < oh * stride - pad + k.
__device__ void coveringRange(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t outExtent,
                              int64_t& first, int64_t& last) {
  const int64_t lo = in + pad - k + 1;  // smallest oh * stride
  first = lo <= 0 ? 0 : (lo + stride - 1) / stride;
  const int64_t hi = (in + pad) / stride;  // in + pad >= 0 always
  last = hi < outExtent - 1 ? hi : outExtent - 1;
}

// max == true: dx = sum of dy over windows whose arg-max is this element; else the AVG share.
__global__ void poolBackwardKernel(const float* dy, float* dx, const int* argmax, PoolShape s,
                                   bool max) {
  const int64_t total = s.planes * s.height * s.width;
  DL4CPP_GRID_STRIDE_LOOP(i, total) {
    const int64_t iw = i % s.width, ih = (i / s.width) % s.height, plane = i / (s.width * s.height);
    const int64_t outPlane = plane * s.outH * s.outW;
    int64_t oh0, oh1, ow0, ow1;
    coveringRange(ih, s.kH, s.sH, s.padTop, s.outH, oh0, oh1);
    coveringRange(iw, s.kW, s.sW, s.padLeft, s.outW, ow0, ow1);
    const int self = static_cast<int>(ih * s.width + iw);
    float sum = 0.0f;
    for (int64_t oh = oh0; oh <= oh1; ++oh)
      for (int64_t ow = ow0; ow <= ow1; ++ow) {
        const int64_t o = outPlane + oh * s.outW + ow;
        if (max) {
          if (argmax[o] == self) sum += dy[o];
        } else {
          const Window win = clippedWindow(s, oh, ow);
          const int64_t count = (win.h1 - win.h0) * (win.w1 - win.w0);
          if (count > 0) sum += dy[o] / static_cast<float>(count);
        }
      }
    dx[i] = sum;
  }
}

}  // namespace

void CudaBackend::poolingForward(PoolingKind kind, const Tensor& x, Tensor& y,
                                 const WindowGeometry& g, bool training, Tensor& workspace) {
  const PoolShape s = poolShape(x.shape(), y.shape(), g);
  const int64_t total = y.numel();
  if (total == 0) return;
  if (kind == PoolingKind::AVG) {
    avgPoolForwardKernel<<<blocksFor(total), kThreadsPerBlock, 0, stream_>>>(x.data(), y.data(), s);
    DL4CPP_CUDA_CHECK_LAUNCH();
    return;
  }
  int* argmax = nullptr;
  if (training) {  // one int32 per output element, in the layer's float workspace
    if (workspace.numel() < total || workspace.device() != Device::cuda(device_))
      workspace = Tensor(Shape{total}, Device::cuda(device_));
    argmax = reinterpret_cast<int*>(workspace.data());
  }
  maxPoolForwardKernel<<<blocksFor(total), kThreadsPerBlock, 0, stream_>>>(x.data(), y.data(),
                                                                          argmax, s);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaBackend::poolingBackward(PoolingKind kind, const Tensor& dy, Tensor& dx,
                                  const WindowGeometry& g, const Tensor& workspace) {
  const PoolShape s = poolShape(dx.shape(), dy.shape(), g);
  const bool max = kind == PoolingKind::MAX;
  if (max && (workspace.numel() < dy.numel() || workspace.device() != Device::cuda(device_)))
    throw BackendError("poolingBackward: MAX pooling needs the workspace of a training-mode "
                       "poolingForward with the same shapes; run forward(training=true) first");
  const int64_t total = dx.numel();
  if (total == 0) return;
  const int* argmax = max ? reinterpret_cast<const int*>(workspace.data()) : nullptr;
  poolBackwardKernel<<<blocksFor(total), kThreadsPerBlock, 0, stream_>>>(dy.data(), dx.data(),
                                                                        argmax, s, max);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

}  // namespace dl4cpp::cuda
