// Highway compiles this file once per x86 level (HighwayTargets.h) for col2imGather, written once
// for vectors of kLanes floats (16 at avx512, 8 at avx2); the rest is compiled once (HWY_ONCE).
#include "nn/backend/cpu/HighwayTargets.h"

#ifdef DL4CPP_X86_KERNELS
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "nn/backend/cpu/im2col/Im2colConvolution.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#endif

#include <omp.h>

#include <algorithm>
#include <cstdint>

#include "nn/backend/cpu/AlignedRows.h"
#include "nn/backend/cpu/ParallelFor.h"
#include "nn/backend/cpu/direct/DirectWeightGradient.h"
#include "nn/backend/cpu/gemm/Sgemm.h"
#include "nn/backend/cpu/im2col/Im2colConvolution.h"

#ifdef DL4CPP_X86_KERNELS
HWY_BEFORE_NAMESPACE();
namespace dl4cpp::cpu::HWY_NAMESPACE {
#if DL4CPP_HWY_KERNEL_TARGET
namespace {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;
using M = hn::Mask<D>;
constexpr int64_t kLanes = HWY_LANES(float);

// Lanes [lo, hi) of a vector.
HWY_INLINE M laneRange(int64_t lo, int64_t hi) {
  const D d;
  return hn::AndNot(hn::FirstN(d, static_cast<size_t>(lo)), hn::FirstN(d, static_cast<size_t>(hi)));
}

// col2im for a horizontal stride of 1, as a gather: each run of kLanes pixels of an input row sums
// its kH·kW shifted column rows in registers and is stored once. The scatter (col2im) adds
// overlapping runs into the same row, one kw after another, and each such add waits for the store
// before it (store-to-load forwarding fails on a partial overlap). Each pixel's sum stays one
// chain of adds: its latency is not what limits the gather, so splitting it (even and odd kw) to
// shorten the chain does not pay.
void col2imGather(const float* col, float* dx, const ConvolutionExtents& e,
                  const WindowGeometry& g) {
  const D d;
  // Locals, so that the compiler need not reload them after each store to dx.
  const int64_t channels = e.channels, inH = e.inH, inW = e.inW, outH = e.outH, outW = e.outW;
  const int64_t kernelH = g.kernelH, kernelW = g.kernelW, strideH = g.strideH;
  const int64_t dilationH = g.dilationH, dilationW = g.dilationW, padTop = g.padTop,
                padLeft = g.padLeft;
  const int64_t positions = outH * outW;
  // Per kw, for the current run of pixels [x0, x0 + width): the lanes that tap kw feeds, and the
  // byte offset from the start of a column row to the element lane 0 would read (negative where
  // the first lanes are masked).
  M lanes[kCol2imGatherMaxKernelW];
  int64_t laneZeroBytes[kCol2imGatherMaxKernelW];
  for (int64_t x0 = 0; x0 < inW; x0 += kLanes) {
    const int64_t width = std::min<int64_t>(kLanes, inW - x0);
    for (int64_t kw = 0; kw < kernelW; ++kw) {
      // Lane j is pixel iw = x0 + j, fed by output column ow = iw - shift when 0 <= ow < outW.
      const int64_t shift = kw * dilationW - padLeft;
      const int64_t lo = std::clamp<int64_t>(shift - x0, 0, width);
      const int64_t hi = std::clamp<int64_t>(outW + shift - x0, lo, width);
      lanes[kw] = laneRange(lo, hi);
      laneZeroBytes[kw] = (x0 - shift) * static_cast<int64_t>(sizeof(float));
    }
    const M store = hn::FirstN(d, static_cast<size_t>(width));
    // The pixels of kChannels channels at once: their sums are independent chains of adds, which
    // the core overlaps (one chain at a time waits on each add's latency).
    const int64_t channelBytes =
        kernelH * kernelW * positions * static_cast<int64_t>(sizeof(float));
    auto gather = [&]<int kChannels>(int64_t c) {
      for (int64_t ih = 0; ih < inH; ++ih) {
        hn::Vec<D> sum[kChannels];
        HWY_UNROLL(4)
        for (int j = 0; j < kChannels; ++j) sum[j] = hn::Zero(d);
        for (int64_t kh = 0; kh < kernelH; ++kh) {
          int64_t oh = ih + padTop - kh * dilationH;  // times strideH
          if (oh < 0) continue;
          if (strideH != 1) {  // a 64-bit division costs more than this row's adds
            if (oh % strideH != 0) continue;
            oh /= strideH;
          }
          if (oh >= outH) continue;
          const auto outRow = reinterpret_cast<uintptr_t>(
              col + (c * kernelH + kh) * kernelW * positions + oh * outW);
          for (int64_t kw = 0; kw < kernelW; ++kw) {
            // Formed as an integer: the address may lie before the row, in masked lanes (as a
            // pointer that would be out-of-bounds arithmetic, undefined behaviour).
            const uintptr_t lane0 =
                outRow + kw * positions * static_cast<int64_t>(sizeof(float)) + laneZeroBytes[kw];
            HWY_UNROLL(4)
            for (int j = 0; j < kChannels; ++j)
              // NOLINTNEXTLINE(performance-no-int-to-ptr): deliberate, see above.
              sum[j] = hn::Add(
                  sum[j], hn::MaskedLoad(lanes[kw], d,
                                         reinterpret_cast<const float*>(lane0 + j * channelBytes)));
          }
        }
        HWY_UNROLL(4)
        for (int j = 0; j < kChannels; ++j)
          hn::BlendedStore(sum[j], store, d, dx + ((c + j) * inH + ih) * inW + x0);
      }
    };
    int64_t c = 0;
    for (; c + 4 <= channels; c += 4) gather.template operator()<4>(c);
    for (; c < channels; ++c) gather.template operator()<1>(c);
  }
}

}  // namespace
#endif  // DL4CPP_HWY_KERNEL_TARGET
}  // namespace dl4cpp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
#endif  // DL4CPP_X86_KERNELS

#if !defined(DL4CPP_X86_KERNELS) || HWY_ONCE
namespace dl4cpp::cpu {

namespace {

using Extents = ConvolutionExtents;

// Kernel column kw sees input column offset + ow * strideW from output column ow; it lands inside
// the input for ow in [first, last).
struct TapColumns {
  int64_t offset, first, last;
};
TapColumns tapColumns(int64_t kw, const Extents& e, const WindowGeometry& g) {
  const int64_t offset = kw * g.dilationW - g.padLeft;
  const int64_t s = g.strideW;
  const int64_t first = std::clamp<int64_t>((-offset + s - 1) / s, 0, e.outW);
  return {offset, first, std::clamp<int64_t>((e.inW - offset + s - 1) / s, first, e.outW)};
}

// Row (c, kh, kw) of the column matrix holds, for every output position, the input pixel that
// kernel tap sees there (0 in the padding).
void im2col(const float* x, float* col, const Extents& e, const WindowGeometry& g) {
  const int64_t positions = e.outH * e.outW;
  float* row = col;
  for (int64_t c = 0; c < e.channels; ++c)
    for (int64_t kh = 0; kh < g.kernelH; ++kh)
      for (int64_t kw = 0; kw < g.kernelW; ++kw, row += positions) {
        const auto [offsetW, first, last] = tapColumns(kw, e, g);
        const int64_t s = g.strideW;
        for (int64_t oh = 0; oh < e.outH; ++oh) {
          float* out = row + oh * e.outW;
          const int64_t ih = oh * g.strideH - g.padTop + kh * g.dilationH;
          if (ih < 0 || ih >= e.inH) {
            std::fill(out, out + e.outW, 0.0f);
            continue;
          }
          const float* in = x + (c * e.inH + ih) * e.inW;  // input row ih; column offsetW + ow * s
          std::fill(out, out + first, 0.0f);
          if (s == 1)
            std::copy(in + offsetW + first, in + offsetW + last, out + first);
          else
            for (int64_t ow = first; ow < last; ++ow) out[ow] = in[offsetW + ow * s];
          std::fill(out + last, out + e.outW, 0.0f);
        }
      }
}

// The inverse of im2col: each entry of a column-gradient matrix is added to the input pixel it
// was read from; taps in the padding are dropped. `dx` is one image, overwritten. Each pixel sums
// its terms in the order (kh, kw), from zero, in both versions below, so they agree bit for bit.
void col2im(const float* __restrict col, float* __restrict dx, const Extents& e,
            const WindowGeometry& g) {
  const int64_t positions = e.outH * e.outW;
  std::fill(dx, dx + e.channels * e.inH * e.inW, 0.0f);
  const float* row = col;
  for (int64_t c = 0; c < e.channels; ++c)
    for (int64_t kh = 0; kh < g.kernelH; ++kh)
      for (int64_t kw = 0; kw < g.kernelW; ++kw, row += positions) {
        const auto [offsetW, first, last] = tapColumns(kw, e, g);
        const int64_t s = g.strideW;
        for (int64_t oh = 0; oh < e.outH; ++oh) {
          const int64_t ih = oh * g.strideH - g.padTop + kh * g.dilationH;
          if (ih < 0 || ih >= e.inH) continue;
          float* __restrict out = dx + (c * e.inH + ih) * e.inW;  // input row ih
          const float* __restrict in = row + oh * e.outW;
          for (int64_t ow = first; ow < last; ++ow) out[offsetW + ow * s] += in[ow];
        }
      }
}

// Images whose weight-gradient terms im2colConvolutionBackwardWeights accumulates into one sum, in
// image order, before the sums are added: a fixed grouping, so that results do not depend on the
// thread count, and a small one, so that the sums stay few (one per image would be 12.8 MB for
// LeNet's second convolution at batch 128).
constexpr int64_t kImagesPerSum = 16;

// Rows of a column matrix, and columns of the extended weights: the kernel taps plus the row of
// ones that multiplies the bias. Scratch holds the weights [O, depth] first, then per thread one
// column matrix [depth, outH * outW] and sgemm's packing space.
int64_t scratchDepth(const Shape& x, const Shape& w) { return x[1] * w[2] * w[3] + 1; }

// The weight gradient from dy, or (activated not null) from f'(activated) · dy, each image's dz in
// its thread's buffer after the column matrices.
void weightGradient(const Tensor& x, const Tensor& dy, const float* activated,
                    const FusedActivation& f, Tensor& dw, Tensor& db, const WindowGeometry& g,
                    float* scratch) {
  const Extents e{x.dim(1), x.dim(2), x.dim(3), dy.dim(2), dy.dim(3)};
  const int64_t images = x.dim(0), outChannels = dw.dim(0);
  const int64_t taps = e.channels * g.kernelH * g.kernelW, depth = taps + 1;
  const int64_t positions = e.outH * e.outW, perChunk = outChannels * depth;
  const int64_t perThread =
      depth * positions + sgemmScratchFloats('N', 'T', outChannels, depth, positions, 1);
  const int64_t chunks = (images + kImagesPerSum - 1) / kImagesPerSum;
  float* sums = scratch;
  float* columns = scratch + chunks * perChunk;
  const int64_t imageGradient = outChannels * positions;
  float* masked = columns + static_cast<int64_t>(omp_get_max_threads()) * perThread;
  const float* xs = x.data();
  const float* dys = dy.data();
  // Inside the loop's region sgemm runs on the calling thread only.
  parallelForOnThreads(chunks, [&](int64_t chunk, int thread) {
    float* col = columns + thread * perThread;
    const int64_t first = chunk * kImagesPerSum;
    for (int64_t n = first; n < std::min(images, first + kImagesPerSum); ++n) {
      im2col(xs + n * e.channels * e.inH * e.inW, col, e, g);
      std::fill(col + taps * positions, col + depth * positions, 1.0f);  // the bias's column
      const float* dyImage = dys + n * imageGradient;
      if (activated != nullptr) {
        float* dz = masked + thread * wholeCacheLines(imageGradient);
        applyFusedActivationBackward(f, activated + n * imageGradient, dyImage, dz, imageGradient);
        dyImage = dz;
      }
      // Row-major sums_chunk[O, depth] (+)= dy_n[O, P] · col[depth, P]ᵀ.
      sgemm('N', 'T', outChannels, depth, positions, dyImage, positions, col, positions,
            n == first ? 0.0f : 1.0f, sums + chunk * perChunk, depth, col + depth * positions);
    }
  });
  directWeightGradientSum(sums, chunks, dw, db);
}

}  // namespace

bool col2imGatherFits(const WindowGeometry& g) {
  return g.strideW == 1 && g.kernelW <= kCol2imGatherMaxKernelW;
}

bool col2imGatherSupported(const WindowGeometry& g) {
  return cpuIsa() >= CpuIsa::Avx2 && col2imGatherFits(g);
}

int64_t im2colScratchFloats(const Shape& x, const Shape& w, const WindowGeometry& g, int threads) {
  const int64_t depth = scratchDepth(x, w), positions = g.outH(x[2]) * g.outW(x[3]);
  const int64_t perThread =
      depth * positions + sgemmScratchFloats('N', 'N', w[0], positions, depth, 1);
  return w[0] * depth + threads * perThread;
}

Im2colForward::Im2colForward(const Tensor& x, const Tensor& w, const Tensor& b,
                             const WindowGeometry& g, float* scratch)
    : x_(x.data()),
      extents_{x.dim(1), x.dim(2), x.dim(3), g.outH(x.dim(2)), g.outW(x.dim(3))},
      geometry_(g),
      outChannels_(w.dim(0)),
      taps_(x.dim(1) * g.kernelH * g.kernelW),
      rows_(scratchDepth(x.shape(), w.shape())),
      bias_(!b.empty()),
      weights_(w.data()) {
  const int64_t positions = extents_.outH * extents_.outW;
  // The bias rides in the GEMM: weights [O, taps + 1] with the bias as last column, times columns
  // [taps + 1, P] whose last row is ones. Filling the output with the bias first and accumulating
  // into it (beta = 1) would add a pass over the output and make the GEMM read it back.
  if (bias_) {
    float* extended = scratch;
    for (int64_t o = 0; o < outChannels_; ++o) {
      std::copy_n(w.data() + o * taps_, taps_, extended + o * (taps_ + 1));
      extended[o * (taps_ + 1) + taps_] = b.data()[o];
    }
    weights_ = extended;
  }
  columns_ = scratch + outChannels_ * rows_;
  perThread_ = rows_ * positions + sgemmScratchFloats('N', 'N', outChannels_, positions, rows_, 1);
}

void Im2colForward::image(int64_t n, float* y, int thread) const {
  const Extents& e = extents_;
  const int64_t positions = e.outH * e.outW, depth = bias_ ? taps_ + 1 : taps_;
  float* col = columns_ + thread * perThread_;
  im2col(x_ + n * e.channels * e.inH * e.inW, col, e, geometry_);
  if (bias_) std::fill(col + taps_ * positions, col + depth * positions, 1.0f);
  // Row-major y_n[O, P] = weights[O, depth] * col[depth, P].
  sgemm('N', 'N', outChannels_, positions, depth, weights_, depth, col, positions, 0.0f, y,
        positions, col + rows_ * positions);
}

void im2colConvolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                              const WindowGeometry& g, float* scratch, const FusedActivation& f) {
  const Im2colForward forward(x, w, b, g, scratch);
  const int64_t perImage = y.numel() / y.dim(0);
  float* ys = y.data();
  // Inside the loop's region sgemm runs on the calling thread only.
  parallelForOnThreads(x.dim(0), [&](int64_t n, int thread) {
    forward.image(n, ys + n * perImage, thread);
    applyFusedActivation(f, ys + n * perImage, perImage);
  });
}

int64_t col2imScratchFloats(const Shape& x, const Shape& w, const WindowGeometry& g, int threads) {
  const int64_t taps = x[1] * w[2] * w[3], positions = g.outH(x[2]) * g.outW(x[3]);
  return threads * (taps * positions + sgemmScratchFloats('T', 'N', taps, positions, w[0], 1));
}

void im2colConvolutionBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx,
                                   const WindowGeometry& g, float* scratch, bool allowGather) {
  [[maybe_unused]] const bool gather = allowGather && col2imGatherSupported(g);  // x86 kernels only
  const Extents e{dx.dim(1), dx.dim(2), dx.dim(3), dy.dim(2), dy.dim(3)};
  const int64_t images = dx.dim(0), outChannels = w.dim(0);
  const int64_t taps = e.channels * g.kernelH * g.kernelW, positions = e.outH * e.outW;
  const float* weights = w.data();
  const float* dys = dy.data();
  float* dxs = dx.data();
  const int64_t perThread =
      taps * positions + sgemmScratchFloats('T', 'N', taps, positions, outChannels, 1);
  parallelForOnThreads(images, [&](int64_t n, int thread) {
    float* col = scratch + thread * perThread;
    // Row-major dcol[taps, P] = w[O, taps]ᵀ · dy_n[O, P].
    sgemm('T', 'N', taps, positions, outChannels, weights, taps, dys + n * outChannels * positions,
          positions, 0.0f, col, positions, col + taps * positions);
    float* image = dxs + n * e.channels * e.inH * e.inW;
#ifdef DL4CPP_X86_KERNELS
    if (gather) {
      highwayKernel(&N_AVX3::col2imGather, &N_AVX2::col2imGather)(col, image, e, g);
      return;
    }
#endif
    col2im(col, image, e, g);
  });
}

int64_t im2colWeightGradientScratchFloats(const Shape& x, const Shape& w, const WindowGeometry& g,
                                          int threads) {
  const int64_t depth = scratchDepth(x, w), positions = g.outH(x[2]) * g.outW(x[3]);
  const int64_t perThread =
      depth * positions + sgemmScratchFloats('N', 'T', w[0], depth, positions, 1);
  const int64_t chunks = (x[0] + kImagesPerSum - 1) / kImagesPerSum;
  return chunks * w[0] * depth + threads * perThread;
}

void im2colConvolutionBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                                      const WindowGeometry& g, float* scratch) {
  weightGradient(x, dy, nullptr, {}, dw, db, g, scratch);
}

int64_t im2colActivationWeightGradientScratchFloats(const Shape& x, const Shape& w,
                                                    const WindowGeometry& g, int threads) {
  return im2colWeightGradientScratchFloats(x, w, g, threads) +
         threads * wholeCacheLines(w[0] * g.outH(x[2]) * g.outW(x[3]));
}

void im2colConvolutionActivationBackwardWeights(const Tensor& x, const Tensor& y, const Tensor& dy,
                                                const FusedActivation& f, Tensor& dw, Tensor& db,
                                                const WindowGeometry& g, float* scratch) {
  weightGradient(x, dy, y.data(), f, dw, db, g, scratch);
}

}  // namespace dl4cpp::cpu
#endif  // HWY_ONCE
