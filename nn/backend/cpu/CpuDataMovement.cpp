// The CPU backend's ops that only move data: copies and zero padding (and its reverse, the crop of
// the gradient), row by row with memcpy, planes or ranges split across the OpenMP threads.
#include <algorithm>
#include <cstring>

#include "nn/backend/cpu/CpuBackend.h"
#include "nn/backend/cpu/ParallelFor.h"

namespace dl4cpp::cpu {

namespace {

// One (n, c) plane: `x` (height, width) into `y` (height + top + bottom, width + left + right).
void padPlane(const float* x, float* y, int64_t height, int64_t width, const Padding2d& p) {
  const int64_t outW = width + p.left + p.right;
  std::fill(y, y + p.top * outW, 0.0f);
  float* row = y + p.top * outW;
  for (int64_t h = 0; h < height; ++h, row += outW) {
    std::fill(row, row + p.left, 0.0f);
    std::memcpy(row + p.left, x + h * width, static_cast<size_t>(width) * sizeof(float));
    std::fill(row + p.left + width, row + outW, 0.0f);
  }
  std::fill(row, row + p.bottom * outW, 0.0f);
}

// The inverse: the (height, width) interior of a padded plane `dy` into `dx`.
void cropPlane(const float* dy, float* dx, int64_t height, int64_t width, const Padding2d& p) {
  const int64_t outW = width + p.left + p.right;
  for (int64_t h = 0; h < height; ++h)
    std::memcpy(dx + h * width, dy + (h + p.top) * outW + p.left,
                static_cast<size_t>(width) * sizeof(float));
}

}  // namespace

void CpuBackend::zeroPaddingForward(const Tensor& x, Tensor& y, const Padding2d& p) {
  if (x.numel() == 0 || y.numel() == 0) return;
  const float* in = x.data();
  float* out = y.data();
  const int64_t height = x.dim(2), width = x.dim(3);
  const int64_t inPlane = height * width, outPlane = y.dim(2) * y.dim(3);
  parallelFor(x.dim(0) * x.dim(1), [=](int64_t plane) {
    padPlane(in + plane * inPlane, out + plane * outPlane, height, width, p);
  });
}

void CpuBackend::zeroPaddingBackward(const Tensor& dy, Tensor& dx, const Padding2d& p) {
  if (dy.numel() == 0 || dx.numel() == 0) return;
  const float* in = dy.data();
  float* out = dx.data();
  const int64_t height = dx.dim(2), width = dx.dim(3);
  const int64_t inPlane = dy.dim(2) * dy.dim(3), outPlane = height * width;
  parallelFor(dx.dim(0) * dx.dim(1), [=](int64_t plane) {
    cropPlane(in + plane * inPlane, out + plane * outPlane, height, width, p);
  });
}

void CpuBackend::copy(const Tensor& src, Tensor& dst) {
  if (src.numel() == 0 || dst.numel() == 0) return;
  const float* in = src.data();
  float* out = dst.data();
  parallelRanges(src.numel(), [=](int64_t begin, int64_t end) {
    std::memcpy(out + begin, in + begin, static_cast<size_t>(end - begin) * sizeof(float));
  });
}

}  // namespace dl4cpp::cpu
