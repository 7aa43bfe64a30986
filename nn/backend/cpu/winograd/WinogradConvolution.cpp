// The Winograd forward pass (alone or with MAX pooling) and backward data, and the shapes they take
// (WinogradConvolution.h). Highway compiles this file once per x86 level (HighwayTargets.h): the
// output transforms below, and the pieces shared with the other Winograd files
// (WinogradKernels-inl.h), are written once, for vectors of kLanes tiles (16 at avx512, 8 at avx2).
#include "nn/backend/cpu/HighwayTargets.h"

#ifdef DL4CPP_X86_KERNELS
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "nn/backend/cpu/winograd/WinogradConvolution.cpp"
// The per-target header after <hwy/highway.h>, on every pass of foreach_target:
// clang-format off
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include "nn/backend/cpu/winograd/WinogradKernels-inl.h"
// clang-format on
#endif

#include <algorithm>

#include "nn/backend/cpu/AlignedRows.h"
#include "nn/backend/cpu/ParallelFor.h"
#include "nn/backend/cpu/pooling/MaxPooling.h"
#include "nn/backend/cpu/winograd/WinogradConvolution.h"
#include "nn/backend/cpu/winograd/WinogradPlan.h"

#ifdef DL4CPP_X86_KERNELS
HWY_BEFORE_NAMESPACE();
namespace dl4cpp::cpu::HWY_NAMESPACE {
#if DL4CPP_HWY_KERNEL_TARGET
namespace {
using namespace winograd_kernels;

// n consecutive floats from src to dst in vectors of kPiece lanes (at most kLanes), the last one
// ending at n (it stores some values again), n >= kPiece. Each vector's offset is clamped to
// n - kPiece: as a plain copy loop GCC turned it into a call of memcpy.
template <size_t kPiece>
HWY_INLINE void storeOverlapping(const float* src, float* dst, int64_t n) {
  const hn::CappedTag<float, kPiece> d;
  constexpr auto piece = static_cast<int64_t>(kPiece);
  for (int64_t i = 0; i < n; i += piece) {
    const int64_t at = std::min(i, n - piece);
    hn::StoreU(hn::LoadU(d, src + at), d, dst + at);
  }
}

// n consecutive floats from src to dst without masked stores (AVX2's are slow on AMD's Zen
// cores).
HWY_INLINE void storeRun(const float* src, float* dst, int64_t n) {
  if (n >= kLanes) {
    storeOverlapping<kLanes>(src, dst, n);
  } else if (n >= 8) {
    storeOverlapping<8>(src, dst, n);
  } else if (n >= 4) {
    storeOverlapping<4>(src, dst, n);
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i];
  }
}

// F(4, 3)'s 1-D output transform Aᵀ m of a patch's values into kTile outputs, on the points 0,
// ±1, ±2 and ∞: m0 + m1 + m2 + m3 + m4, (m1 - m2) + 2 (m3 - m4), (m1 + m2) + 4 (m3 + m4),
// (m1 - m2) + 8 (m3 - m4) + m5.
HWY_INLINE void outputTransform(const V (&m)[kPatch], V (&out)[kTile]) {
  const D d;
  const V sum12 = hn::Add(m[1], m[2]), diff12 = hn::Sub(m[1], m[2]);
  const V sum34 = hn::Add(m[3], m[4]), diff34 = hn::Sub(m[3], m[4]);
  out[0] = hn::Add(hn::Add(m[0], sum12), sum34);
  out[1] = hn::MulAdd(hn::Set(d, 2.0f), diff34, diff12);
  out[2] = hn::MulAdd(hn::Set(d, 4.0f), sum34, sum12);
  out[3] = hn::Add(hn::MulAdd(hn::Set(d, 8.0f), diff34, diff12), m[5]);
}

// Aᵀ M of kLanes tiles from `products` on: the kTile output rows' values at the patch's columns.
HWY_INLINE void outputColumns(const float* products, int64_t positionStride,
                              V (&columns)[kTile][kPatch]) {
  const D d;
  for (int j = 0; j < kPatch; ++j) {
    V column[kPatch], out[kTile];
    for (int i = 0; i < kPatch; ++i)
      column[i] = hn::LoadU(d, products + (i * kPatch + j) * positionStride);
    outputTransform(column, out);
    for (int r = 0; r < kTile; ++r) columns[r][j] = out[r];
  }
}

// Every output of the item's tiles: Aᵀ M A + bias, into the image's planes. Vectors of consecutive
// tiles across tile rows, each vector's kTile output rows going out in runs of one
// tile row.
void transformOutput(const float* bias, int64_t firstTileRow, int64_t tileRows, const Plan& p,
                     const ItemScratch& s, float* image) {
  const D d;
  const int64_t positionStride = p.productPositionStride();
  const int64_t tiles = tileRows * p.tilesW;
  HWY_ALIGN float outputRows[kTile][kTile * kMaxLanes];  // each row's outputs, tile by tile
  for (int64_t o = 0; o < p.outChannels; ++o) {
    const V b = hn::Set(d, bias ? bias[o] : 0.0f);
    float* plane = image + o * p.outH * p.outW;
    const float* products = s.products + o * p.tileStride;
    for (int64_t t0 = 0; t0 < tiles; t0 += kLanes) {
      V columns[kTile][kPatch];
      outputColumns(products + t0, positionStride, columns);
      for (int r = 0; r < kTile; ++r) {
        V out[kTile];
        outputTransform(columns[r], out);
        for (V& v : out) v = hn::Add(v, b);
        if constexpr (kTile == 2)
          hn::StoreInterleaved2(out[0], out[1], d, outputRows[r]);
        else
          hn::StoreInterleaved4(out[0], out[1], out[2], out[3], d, outputRows[r]);
      }
      const int64_t end = std::min(t0 + kLanes, tiles);
      for (int64_t t = t0; t < end;) {
        const int64_t tr = t / p.tilesW, tc = t % p.tilesW;
        const int64_t run = std::min(p.tilesW - tc, end - t);
        const int64_t outRow = kTile * (firstTileRow + tr);
        const int64_t n = std::min(kTile * run, p.outW - kTile * tc);
        for (int64_t r = 0; r < kTile && outRow + r < p.outH; ++r)
          storeRun(outputRows[r] + kTile * (t - t0), plane + (outRow + r) * p.outW + kTile * tc, n);
        t += run;
      }
    }
  }
}

void runItem(const float* in, const float* weights, const float* bias, float* out,
             int64_t firstTileRow, const Plan& p, float* scratch) {
  const ItemScratch s = itemScratch(p, scratch);
  const int64_t tileRows = std::min(p.tileRowsPerItem, p.tilesH - firstTileRow);
  transformInput(in, firstTileRow, tileRows, p, s);
  multiply(weights, tileRows * p.tilesW, p, s);
  transformOutput(bias, firstTileRow, tileRows, p, s, out);
}

}  // namespace
#endif  // DL4CPP_HWY_KERNEL_TARGET
}  // namespace dl4cpp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
#endif  // DL4CPP_X86_KERNELS

#if !defined(DL4CPP_X86_KERNELS) || HWY_ONCE
namespace dl4cpp::cpu {

namespace winograd {
namespace {

#ifdef DL4CPP_X86_KERNELS
using ItemKernel = void (*)(const float*, const float*, const float*, float*, int64_t, const Plan&,
                            float*);
ItemKernel itemKernel() { return highwayKernel(&N_AVX3::runItem, &N_AVX2::runItem); }
#endif

// Every item, then f on the item's output rows of each plane while they are in cache.
void run(const Plan& p, const float* in, const float* bias, float* out, float* scratch,
         const FusedActivation& f) {
#ifdef DL4CPP_X86_KERNELS
  const ItemKernel item = itemKernel();
  const float* weights = scratch;
  float* threadScratch = scratch + p.weightFloats();
  const int64_t inImage = p.inChannels * p.inH * p.inW, outImage = p.outChannels * p.outH * p.outW;
  const int64_t outPlane = p.outH * p.outW;
  parallelForOnThreads(p.images * p.itemsPerImage, [&](int64_t i, int thread) {
    const int64_t n = i / p.itemsPerImage, firstTileRow = i % p.itemsPerImage * p.tileRowsPerItem;
    float* image = out + n * outImage;
    item(in + n * inImage, weights, bias, image, firstTileRow, p,
         threadScratch + thread * p.threadFloats());
    if (f.kind == ActivationKind::IDENTITY) return;
    const int64_t firstRow = p.tile() * firstTileRow;
    const int64_t rows = std::min(p.tile() * p.tileRowsPerItem, p.outH - firstRow);
    for (int64_t o = 0; o < p.outChannels; ++o)
      applyFusedActivation(f, image + o * outPlane + firstRow * p.outW, rows * p.outW);
  });
#else
  (void)p, (void)in, (void)bias, (void)out, (void)scratch, (void)f;
#endif
}

// Per thread, with max pooling: the item scratch, then one image's convolution output, in whole
// cache lines (after the weights, also in whole lines) so that the threads' buffers never share
// one.
int64_t fusedThreadFloats(const Plan& p) {
  return wholeCacheLines(p.threadFloats() + p.outChannels * p.outH * p.outW);
}

}  // namespace
}  // namespace winograd

bool winogradConvolutionFits(const WindowGeometry& g) {
  const auto padFits = [&](int64_t pad) { return pad >= 0 && pad < g.kernelH; };
  return (g.kernelH == 3 || g.kernelH == 5) && g.kernelW == g.kernelH && g.strideH == 1 &&
         g.strideW == 1 && g.dilationH == 1 && g.dilationW == 1 && padFits(g.padTop) &&
         padFits(g.padLeft) && padFits(g.padBottom) && padFits(g.padRight);
}

bool winogradConvolutionSupported(const WindowGeometry& g) {
  return cpuIsa() >= CpuIsa::Avx2 && winogradConvolutionFits(g);
}

int64_t winogradForwardScratchFloats(const Shape& x, const Shape& w, const WindowGeometry& g,
                                     int threads) {
  if (winograd::imagesInLanes(g))
    return winograd::laneForwardScratchFloats(winograd::lanePlan(x, w, g), threads);
  const winograd::Plan p = winograd::forwardPlan(x, w, g);
  return p.weightFloats() + threads * p.threadFloats();
}

int64_t winogradBackwardDataScratchFloats(const Shape& dx, const Shape& w, const WindowGeometry& g,
                                          int threads) {
  if (winograd::imagesInLanes(g))
    return winograd::laneBackwardDataScratchFloats(winograd::lanePlan(dx, w, g), threads);
  const winograd::Plan p = winograd::backwardDataPlan(dx, w, g);
  return p.weightFloats() + threads * p.threadFloats();
}

void winogradConvolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                                const WindowGeometry& g, float* scratch, const FusedActivation& f) {
  winograd::checkSupported(g, w.shape(), "forward");
  if (winograd::imagesInLanes(g)) {
    winograd::runLaneForward(winograd::lanePlan(x.shape(), w.shape(), g), x, w,
                             b.empty() ? nullptr : b.data(), y.data(), scratch, f);
    return;
  }
  const winograd::Plan p = winograd::forwardPlan(x.shape(), w.shape(), g);
  winograd::transformWeights(w, winograd::WeightsFor::Forward, scratch);
  winograd::run(p, x.data(), b.empty() ? nullptr : b.data(), y.data(), scratch, f);
}

int64_t winogradConvolutionMaxPoolingForwardScratchFloats(const Shape& x, const Shape& w,
                                                          const WindowGeometry& g, int threads) {
  if (winograd::imagesInLanes(g))
    return winograd::laneMaxPoolingForwardScratchFloats(winograd::lanePlan(x, w, g), threads);
  const winograd::Plan p = winograd::forwardPlan(x, w, g);
  return wholeCacheLines(p.weightFloats()) + threads * winograd::fusedThreadFloats(p);
}

void winogradConvolutionMaxPoolingForward(const Tensor& x, const Tensor& w, const Tensor& b,
                                          Tensor& pooled, const FusedActivation& f,
                                          const WindowGeometry& g, const WindowGeometry& poolG,
                                          uint8_t* argmax, float* scratch) {
  winograd::checkSupported(g, w.shape(), "forward with max pooling");
  if (winograd::imagesInLanes(g)) {
    winograd::runLaneMaxPoolingForward(winograd::lanePlan(x.shape(), w.shape(), g), x, w,
                                       b.empty() ? nullptr : b.data(), pooled, f, poolG, argmax,
                                       scratch);
    return;
  }
#ifdef DL4CPP_X86_KERNELS
  const winograd::Plan p = winograd::forwardPlan(x.shape(), w.shape(), g);
  winograd::transformWeights(w, winograd::WeightsFor::Forward, scratch);
  const winograd::ItemKernel item = winograd::itemKernel();
  const float* bias = b.empty() ? nullptr : b.data();
  const PlaneExtents e{p.outH, p.outW, pooled.dim(2), pooled.dim(3)};
  const int64_t inImage = p.inChannels * p.inH * p.inW,
                pooledImage = p.outChannels * e.outH * e.outW;
  const int64_t perThread = winograd::fusedThreadFloats(p);
  parallelForOnThreads(p.images, [&](int64_t n, int thread) {
    float* itemScratch = scratch + wholeCacheLines(p.weightFloats()) + thread * perThread;
    float* convolved = itemScratch + p.threadFloats();
    for (int64_t row = 0; row < p.tilesH; row += p.tileRowsPerItem)
      item(x.data() + n * inImage, scratch, bias, convolved, row, p, itemScratch);
    applyFusedActivation(f, convolved, p.outChannels * p.outH * p.outW);
    maxPoolingForwardPlanes(convolved, pooled.data() + n * pooledImage,
                            argmax ? argmax + n * pooledImage : nullptr, p.outChannels, e, poolG);
  });
#else
  (void)x, (void)b, (void)pooled, (void)f, (void)poolG, (void)argmax, (void)scratch;
#endif
}

void winogradConvolutionBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx,
                                     const WindowGeometry& g, float* scratch) {
  winograd::checkSupported(g, w.shape(), "backward data");
  if (winograd::imagesInLanes(g)) {
    winograd::runLaneBackwardData(winograd::lanePlan(dx.shape(), w.shape(), g), dy, w, dx, scratch);
    return;
  }
  const winograd::Plan p = winograd::backwardDataPlan(dx.shape(), w.shape(), g);
  winograd::transformWeights(w, winograd::WeightsFor::ForwardOverGradient, scratch);
  winograd::run(p, dy.data(), nullptr, dx.data(), scratch, {});
}

}  // namespace dl4cpp::cpu
#endif  // HWY_ONCE
