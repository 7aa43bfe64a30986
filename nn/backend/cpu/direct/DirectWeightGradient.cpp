// Highway compiles this file once per x86 level (HighwayTargets.h): the kernels below are written
// once, for vectors of kLanes floats (16 at avx512, 8 at avx2), with register blocks sized to each
// level's register file.
#include "nn/backend/cpu/HighwayTargets.h"

#ifdef DL4CPP_X86_KERNELS
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "nn/backend/cpu/direct/DirectWeightGradient.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#endif

#include <algorithm>

#include "nn/backend/cpu/KernelTable.h"
#include "nn/backend/cpu/ParallelFor.h"
#include "nn/backend/cpu/direct/DirectWeightGradient.h"
#include "nn/core/Error.h"

#ifdef DL4CPP_X86_KERNELS
HWY_BEFORE_NAMESPACE();
namespace dl4cpp::cpu::HWY_NAMESPACE {
#if DL4CPP_HWY_KERNEL_TARGET
namespace {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;
using M = hn::Mask<D>;
constexpr int64_t kLanes = HWY_LANES(float);

// A block of up to kMaxChannels output channels times up to kMaxTaps adjacent taps of sums, and
// the taps' input vectors: of AVX-512's 32 registers 25 + 5 (a square block needs the fewest loads
// per FMA: 5 x 5 is 10 loads for 25 FMAs; 10 channels x 2 taps 12 for 20); of AVX2's 16, 2 x 5 +
// 5 and the dy vector.
#if HWY_TARGET == HWY_AVX3
constexpr int kMaxChannels = 5;
#else
constexpr int kMaxChannels = 2;
#endif
constexpr int kMaxTaps = 5;

struct Extents {
  int64_t channels, inH, inW, outH, outW, kernelH, kernelW;
  int64_t taps() const { return channels * kernelH * kernelW; }
};

Extents extentsOf(const Shape& x, const Shape& dw, const WindowGeometry& g) {
  return {x[1], x[2], x[3], g.outH(x[2]), g.outW(x[3]), dw[2], dw[3]};
}

// kLanes floats from p, or (kTail) only those in `lanes`, zeros elsewhere.
template <bool kTail>
HWY_INLINE V load(const float* p, M lanes) {
  const D d;
  if constexpr (kTail) return hn::MaskedLoad(lanes, d, p);
  (void)lanes;
  return hn::LoadU(d, p);
}

// One run of kLanes outputs of a row for adjacentTapGradients, or (kTail) of the row's last
// outputs, in `lanes` (the lanes outside load zeros, so they add nothing).
template <int B, int K, bool kTail>
HWY_INLINE void accumulateRun(const float* in, const float* d, int64_t outPlane, M lanes,
                              V (&acc)[K][B]) {
  // The asm statements keep the loaded vectors in registers: GCC would otherwise fold each input
  // load into the B FMAs that use it, and each dy load into its K FMAs, loading them again.
  V v[K];
  HWY_UNROLL(8)
  for (int k = 0; k < K; ++k) {
    v[k] = load<kTail>(in + k, lanes);
    asm("" : "+v"(v[k].raw));
  }
  HWY_UNROLL(8)
  for (int j = 0; j < B; ++j) {
    V g = load<kTail>(d + j * outPlane, lanes);
    asm("" : "+v"(g.raw));
    HWY_UNROLL(8)
    for (int k = 0; k < K; ++k) acc[k][j] = hn::MulAdd(v[k], g, acc[k][j]);
  }
}

// The gradients of K horizontally adjacent taps for B output channels from one image:
// grad[j * stride + k] = Σ over outputs of dy[j] times the input pixel tap k sees there. `x` is
// the input at the first tap's offset (channel plane + kh·W + kw), `dy` the first channel's
// gradient plane.
template <int B, int K>
void adjacentTapGradients(const float* x, const float* dy, float* grad, int64_t stride,
                          const Extents& e) {
  const D d;
  const int64_t inW = e.inW, outW = e.outW, outH = e.outH, outPlane = outH * outW;
  const int64_t fullRuns = outW / kLanes, tail = outW % kLanes;
  const M tailLanes = hn::FirstN(d, static_cast<size_t>(tail));
  V acc[K][B];
  HWY_UNROLL(8)
  for (int k = 0; k < K; ++k) HWY_UNROLL(8)
  for (int j = 0; j < B; ++j) acc[k][j] = hn::Zero(d);
  for (int64_t oh = 0; oh < outH; ++oh) {
    const float* in = x + oh * inW;
    const float* dRow = dy + oh * outW;
    for (int64_t r = 0; r < fullRuns; ++r, in += kLanes, dRow += kLanes)
      accumulateRun<B, K, false>(in, dRow, outPlane, tailLanes, acc);
    if (tail) accumulateRun<B, K, true>(in, dRow, outPlane, tailLanes, acc);
  }
  HWY_UNROLL(8)
  for (int k = 0; k < K; ++k) HWY_UNROLL(8)
  for (int j = 0; j < B; ++j) grad[j * stride + k] = hn::GetLane(hn::SumOfLanes(d, acc[k][j]));
}

using TapKernel = void (*)(const float*, const float*, float*, int64_t, const Extents&);

// kTapKernels[B - 1][K - 1] handles B channels and K taps.
template <int B, int K>
struct TapKernelFor {
  static constexpr TapKernel kernel = &adjacentTapGradients<B, K>;
};
constexpr auto kTapKernels = kernelTable<TapKernelFor, kMaxChannels, kMaxTaps>();

// B = `channels` output channels' gradients from one image: grad[j * stride + t] for every tap t,
// and grad[j * stride + taps] = Σ dy[j] (the bias).
void channelBlockGradients(const float* x, const float* dy, int64_t channels, float* grad,
                           int64_t stride, const Extents& e) {
  const D d;
  const auto& kernels = kTapKernels[static_cast<size_t>(channels - 1)];
  const int64_t inPlane = e.inH * e.inW, outPlane = e.outH * e.outW;
  int64_t t = 0;
  for (int64_t c = 0; c < e.channels; ++c)
    for (int64_t kh = 0; kh < e.kernelH; ++kh)
      for (int64_t kw = 0; kw < e.kernelW;) {
        const int64_t run = std::min<int64_t>(kMaxTaps, e.kernelW - kw);
        kernels[static_cast<size_t>(run - 1)](x + c * inPlane + kh * e.inW + kw, dy, grad + t,
                                              stride, e);
        kw += run;
        t += run;
      }
  for (int64_t j = 0; j < channels; ++j) {
    const float* p = dy + j * outPlane;
    V sum = hn::Zero(d);
    int64_t i = 0;
    for (; i + kLanes <= outPlane; i += kLanes) sum = hn::Add(sum, hn::LoadU(d, p + i));
    const M rest = hn::FirstN(d, static_cast<size_t>(outPlane - i));
    sum = hn::Add(sum, hn::MaskedLoad(rest, d, p + i));
    grad[j * stride + t] = hn::GetLane(hn::SumOfLanes(d, sum));
  }
}

void imageGradients(const float* x, const float* dy, float* sums, const Shape& xShape,
                    const Shape& dwShape, const WindowGeometry& g) {
  const Extents e = extentsOf(xShape, dwShape, g);
  const int64_t outChannels = dwShape[0], stride = e.taps() + 1, outPlane = e.outH * e.outW;
  for (int64_t first = 0; first < outChannels; first += kMaxChannels)
    channelBlockGradients(x, dy + first * outPlane,
                          std::min<int64_t>(kMaxChannels, outChannels - first),
                          sums + first * stride, stride, e);
}

}  // namespace
#endif  // DL4CPP_HWY_KERNEL_TARGET
}  // namespace dl4cpp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
#endif  // DL4CPP_X86_KERNELS

#if !defined(DL4CPP_X86_KERNELS) || HWY_ONCE
namespace dl4cpp::cpu {

bool directWeightGradientFits(const WindowGeometry& g) { return g.plain(); }

bool directWeightGradientSupported(const WindowGeometry& g) {
  return cpuIsa() >= CpuIsa::Avx2 && directWeightGradientFits(g);
}

int64_t directWeightGradientScratchFloats(const Shape& x, const Shape& w) {
  return x[0] * w[0] * (w.numel() / w[0] + 1);
}

void directWeightGradientImage(const float* x, const float* dy, float* sums, const Shape& xShape,
                               const Shape& dwShape, const WindowGeometry& g) {
#ifdef DL4CPP_X86_KERNELS
  highwayKernel(&N_AVX3::imageGradients, &N_AVX2::imageGradients)(x, dy, sums, xShape, dwShape, g);
#else
  (void)x, (void)dy, (void)sums, (void)xShape, (void)dwShape, (void)g;
#endif
}

void directWeightGradientSum(const float* sums, int64_t images, Tensor& dw, Tensor& db) {
  const int64_t outChannels = dw.dim(0), taps = dw.numel() / outChannels;
  const int64_t stride = taps + 1, perImage = outChannels * stride;
  float* grad = dw.data();
  float* bias = db.empty() ? nullptr : db.data();
  parallelFor(outChannels, [&](int64_t o) {
    for (int64_t t = 0; t <= taps; ++t) {
      float sum = 0.0f;
      for (int64_t n = 0; n < images; ++n) sum += sums[n * perImage + o * stride + t];
      if (t < taps)
        grad[o * taps + t] = sum;
      else if (bias)
        bias[o] = sum;
    }
  });
}

void directWeightGradient(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                          const WindowGeometry& g, float* scratch) {
  if (!directWeightGradientSupported(g))
    throw BackendError(
        "direct convolution weight gradient: needs AVX2 or AVX-512, stride 1, no padding or "
        "dilation");
  const int64_t perImage = dw.dim(0) * (dw.numel() / dw.dim(0) + 1);
  const int64_t inImage = x.numel() / x.dim(0), outImage = dy.numel() / dy.dim(0);
  const float* xs = x.data();
  const float* dys = dy.data();
  parallelFor(x.dim(0), [&](int64_t n) {
    directWeightGradientImage(xs + n * inImage, dys + n * outImage, scratch + n * perImage,
                              x.shape(), dw.shape(), g);
  });
  directWeightGradientSum(scratch, x.dim(0), dw, db);
}

}  // namespace dl4cpp::cpu
#endif  // HWY_ONCE
