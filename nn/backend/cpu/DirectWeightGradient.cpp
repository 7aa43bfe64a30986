#include <dl4cpp/nn/Error.h>
#include <dl4cpp/nn/backend/cpu/Avx512Sum.h>
#include <dl4cpp/nn/backend/cpu/CpuIsa.h>
#include <dl4cpp/nn/backend/cpu/DirectWeightGradient.h>
#include <dl4cpp/nn/backend/cpu/KernelTable.h>
#include <dl4cpp/nn/backend/cpu/ParallelFor.h>
#include <dl4cpp/nn/backend/cpu/X86Kernels.h>

#include <algorithm>

namespace dl4cpp::cpu {

namespace {

// A block of up to kMaxChannels output channels times up to kMaxTaps adjacent taps: 25
// accumulators and 5 input vectors, of AVX-512's 32 registers. A square block needs the fewest
// loads per FMA (5 x 5: 10 loads for 25 FMAs; 10 channels x 2 taps: 12 for 20).
constexpr int kMaxChannels = 5;
constexpr int kMaxTaps = 5;

struct Extents {
  int64_t channels, inH, inW, outH, outW, kernelH, kernelW;
  int64_t taps() const { return channels * kernelH * kernelW; }
};

#ifdef DL4CPP_X86_KERNELS
// One run of 16 outputs of a row for adjacentTapGradients (masked lanes load zeros, so they add
// nothing).
template <int B, int K>
__attribute__((target("avx512f"), always_inline)) inline void accumulateRun(
    const float* in, const float* d, int64_t outPlane, __mmask16 lanes, __m512 (&acc)[K][B]) {
  __m512 v[K];
#pragma GCC unroll 8
  for (int k = 0; k < K; ++k) v[k] = _mm512_maskz_loadu_ps(lanes, in + k);
#pragma GCC unroll 8
  for (int j = 0; j < B; ++j) {
    __m512 g = _mm512_maskz_loadu_ps(lanes, d + j * outPlane);
    // Keeps g in a register: GCC would otherwise fold the load into each of the K FMAs.
    asm("" : "+v"(g));
#pragma GCC unroll 8
    for (int k = 0; k < K; ++k) acc[k][j] = _mm512_fmadd_ps(v[k], g, acc[k][j]);
  }
}

// The gradients of K horizontally adjacent taps for B output channels from one image:
// grad[j * stride + k] = Σ over outputs of dy[j] times the input pixel tap k sees there. `x` is
// the input at the first tap's offset (channel plane + kh·W + kw), `dy` the first channel's
// gradient plane.
template <int B, int K>
__attribute__((target("avx512f"))) void adjacentTapGradients(const float* x, const float* dy,
                                                             float* grad, int64_t stride,
                                                             const Extents& e) {
  const int64_t inW = e.inW, outW = e.outW, outH = e.outH, outPlane = outH * outW;
  const auto tail = static_cast<__mmask16>((1u << (outW % 16)) - 1);
  const int64_t fullRuns = outW / 16;
  __m512 acc[K][B];
#pragma GCC unroll 8
  for (int k = 0; k < K; ++k)
#pragma GCC unroll 8
    for (int j = 0; j < B; ++j) acc[k][j] = _mm512_setzero_ps();
  for (int64_t oh = 0; oh < outH; ++oh) {
    const float* in = x + oh * inW;
    const float* d = dy + oh * outW;
    for (int64_t r = 0; r < fullRuns; ++r, in += 16, d += 16)
      accumulateRun<B, K>(in, d, outPlane, 0xFFFF, acc);
    if (tail) accumulateRun<B, K>(in, d, outPlane, tail, acc);
  }
#pragma GCC unroll 8
  for (int k = 0; k < K; ++k)
#pragma GCC unroll 8
    for (int j = 0; j < B; ++j) grad[j * stride + k] = sumOfLanes(acc[k][j]);
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
__attribute__((target("avx512f"))) void channelBlockGradients(const float* x, const float* dy,
                                                              int64_t channels, float* grad,
                                                              int64_t stride, const Extents& e) {
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
    const float* d = dy + j * outPlane;
    __m512 sum = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= outPlane; i += 16) sum = _mm512_add_ps(sum, _mm512_loadu_ps(d + i));
    const auto rest = static_cast<__mmask16>((1u << (outPlane - i)) - 1);
    sum = _mm512_add_ps(sum, _mm512_maskz_loadu_ps(rest, d + i));
    grad[j * stride + t] = sumOfLanes(sum);
  }
}

Extents extentsOf(const Shape& x, const Shape& dw, const WindowGeometry& g) {
  return {x[1], x[2], x[3], g.outH(x[2]), g.outW(x[3]), dw[2], dw[3]};
}

#endif

}  // namespace

bool directWeightGradientFits(const WindowGeometry& g) {
  return g.strideH == 1 && g.strideW == 1 && g.dilationH == 1 && g.dilationW == 1 &&
         g.padTop == 0 && g.padLeft == 0 && g.padBottom == 0 && g.padRight == 0;
}

bool directWeightGradientSupported(const WindowGeometry& g) {
  return cpuIsa() >= CpuIsa::Avx512 && directWeightGradientFits(g);
}

int64_t directWeightGradientScratchFloats(const Shape& x, const Shape& w) {
  return x[0] * w[0] * (w.numel() / w[0] + 1);
}

void directWeightGradientImage(const float* x, const float* dy, float* sums, const Shape& xShape,
                               const Shape& dwShape, const WindowGeometry& g) {
#ifdef DL4CPP_X86_KERNELS
  const Extents e = extentsOf(xShape, dwShape, g);
  const int64_t outChannels = dwShape[0], stride = e.taps() + 1, outPlane = e.outH * e.outW;
  for (int64_t first = 0; first < outChannels; first += kMaxChannels)
    channelBlockGradients(x, dy + first * outPlane,
                          std::min<int64_t>(kMaxChannels, outChannels - first),
                          sums + first * stride, stride, e);
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
        "direct convolution weight gradient: needs AVX-512, stride 1, no padding or dilation");
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
