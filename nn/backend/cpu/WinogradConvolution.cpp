// The Winograd forward pass (alone or with MAX pooling) and backward data, and the shapes they take
// (WinogradConvolution.h). Highway compiles this file once per x86 level (HighwayTargets.h): the
// output transforms below, and the pieces shared with the other Winograd files
// (WinogradKernels-inl.h), are written once, for vectors of kLanes tiles (16 at avx512, 8 at avx2).
#include <dl4cpp/nn/backend/cpu/HighwayTargets.h>

#ifdef DL4CPP_X86_KERNELS
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dl4cpp/nn/backend/cpu/WinogradConvolution.cpp"
// The per-target header after <hwy/highway.h>, on every pass of foreach_target:
// clang-format off
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <dl4cpp/nn/backend/cpu/WinogradKernels-inl.h>
// clang-format on
#endif

#include <dl4cpp/nn/backend/cpu/AlignedRows.h>
#include <dl4cpp/nn/backend/cpu/MaxPooling.h>
#include <dl4cpp/nn/backend/cpu/ParallelFor.h>
#include <dl4cpp/nn/backend/cpu/WinogradConvolution.h>
#include <dl4cpp/nn/backend/cpu/WinogradPlan.h>

#include <algorithm>

#ifdef DL4CPP_X86_KERNELS
HWY_BEFORE_NAMESPACE();
namespace dl4cpp::cpu::HWY_NAMESPACE {
#if DL4CPP_HWY_KERNEL_TARGET
namespace {
using namespace winograd_kernels;

// n consecutive floats from src to dst: whole vectors, the rest under a mask.
HWY_INLINE void storeRun(const float* src, float* dst, int64_t n) {
  const D d;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) hn::StoreU(hn::LoadU(d, src + i), d, dst + i);
  if (i < n)
    hn::BlendedStore(hn::LoadU(d, src + i), hn::FirstN(d, static_cast<size_t>(n - i)), d, dst + i);
}

// n outputs of a row from two interleaved vectors (even and odd columns), n <= 2 kLanes.
HWY_INLINE void storeRowPairs(V even, V odd, float* dst, int64_t n) {
  const D d;
  if (n == 2 * kLanes) {
    hn::StoreInterleaved2(even, odd, d, dst);
    return;
  }
  HWY_ALIGN float row[2 * kMaxLanes];
  hn::StoreInterleaved2(even, odd, d, row);
  storeRun(row, dst, n);
}

// The 1-D output transform Aᵀ m of kKernel + 1 values into two outputs. F(2, 3): m0 + m1 + m2,
// m1 - m2 - m3; F(2, 5): m0 + m1 + m2 + m3 + m4, (m1 - m2) + 2 (m3 - m4) + m5.
template <int kKernel>
HWY_INLINE void outputTransform(const V (&m)[kKernel + 1], V& out0, V& out1) {
  if constexpr (kKernel == 3) {
    out0 = hn::Add(hn::Add(m[0], m[1]), m[2]);
    out1 = hn::Sub(hn::Sub(m[1], m[2]), m[3]);
  } else {
    const D d;
    out0 = hn::Add(hn::Add(hn::Add(m[0], m[1]), hn::Add(m[2], m[3])), m[4]);
    out1 = hn::Add(hn::MulAdd(hn::Set(d, 2.0f), hn::Sub(m[3], m[4]), hn::Sub(m[1], m[2])), m[5]);
  }
}

// Aᵀ M of kLanes tiles from `products` on: the two output rows' values at the patch's columns.
template <int kKernel>
HWY_INLINE void outputColumns(const float* products, int64_t positionStride,
                              V (&columns)[2][kKernel + 1]) {
  constexpr int kPatch = kKernel + 1;
  const D d;
  for (int j = 0; j < kPatch; ++j) {
    V column[kPatch];
    for (int i = 0; i < kPatch; ++i)
      column[i] = hn::LoadU(d, products + (i * kPatch + j) * positionStride);
    outputTransform<kKernel>(column, columns[0][j], columns[1][j]);
  }
}

// Every output of the item's tiles: Aᵀ M A + bias, into the image's planes, a tile row's tiles at
// a time.
template <int kKernel>
void transformOutputByRows(const float* bias, int64_t firstTileRow, int64_t tileRows, const Plan& p,
                           const ItemScratch& s, float* image) {
  const D d;
  const int64_t positionStride = p.outChannels * p.tileStride;
  for (int64_t o = 0; o < p.outChannels; ++o) {
    const V b = hn::Set(d, bias ? bias[o] : 0.0f);
    float* plane = image + o * p.outH * p.outW;
    const float* products = s.products + o * p.tileStride;
    for (int64_t tr = 0; tr < tileRows; ++tr) {
      const int64_t outRow = 2 * (firstTileRow + tr);
      for (int64_t t0 = 0; t0 < p.tilesW; t0 += kLanes) {
        V columns[2][kKernel + 1];
        outputColumns<kKernel>(products + tr * p.tilesW + t0, positionStride, columns);
        const int64_t n = std::min<int64_t>(2 * kLanes, p.outW - 2 * t0);
        for (int64_t r = 0; r < 2 && outRow + r < p.outH; ++r) {
          V even, odd;
          outputTransform<kKernel>(columns[r], even, odd);
          storeRowPairs(hn::Add(even, b), hn::Add(odd, b), plane + (outRow + r) * p.outW + 2 * t0,
                        n);
        }
      }
    }
  }
}

// The same with flat tiles: vectors of consecutive tiles across tile rows, each vector's two
// output rows going out in runs of one tile row.
template <int kKernel>
void transformOutputFlat(const float* bias, int64_t firstTileRow, int64_t tileRows, const Plan& p,
                         const ItemScratch& s, float* image) {
  const D d;
  const int64_t positionStride = p.outChannels * p.tileStride;
  const int64_t tiles = tileRows * p.tilesW;
  HWY_ALIGN float pairs[2][2 * kMaxLanes];  // each output row's two outputs per tile, interleaved
  for (int64_t o = 0; o < p.outChannels; ++o) {
    const V b = hn::Set(d, bias ? bias[o] : 0.0f);
    float* plane = image + o * p.outH * p.outW;
    const float* products = s.products + o * p.tileStride;
    for (int64_t t0 = 0; t0 < tiles; t0 += kLanes) {
      V columns[2][kKernel + 1];
      outputColumns<kKernel>(products + t0, positionStride, columns);
      for (int r = 0; r < 2; ++r) {
        V even, odd;
        outputTransform<kKernel>(columns[r], even, odd);
        hn::StoreInterleaved2(hn::Add(even, b), hn::Add(odd, b), d, pairs[r]);
      }
      const int64_t end = std::min(t0 + kLanes, tiles);
      for (int64_t t = t0; t < end;) {
        const int64_t tr = t / p.tilesW, tc = t % p.tilesW;
        const int64_t run = std::min(p.tilesW - tc, end - t);
        const int64_t outRow = 2 * (firstTileRow + tr);
        const int64_t n = std::min(2 * run, p.outW - 2 * tc);
        for (int64_t r = 0; r < 2 && outRow + r < p.outH; ++r)
          storeRun(pairs[r] + 2 * (t - t0), plane + (outRow + r) * p.outW + 2 * tc, n);
        t += run;
      }
    }
  }
}

template <int kKernel>
void runItem(const float* in, const float* weights, const float* bias, float* out,
             int64_t firstTileRow, const Plan& p, float* scratch) {
  const ItemScratch s = itemScratch(p, scratch);
  const int64_t tileRows = std::min(p.tileRowsPerItem, p.tilesH - firstTileRow);
  transformInput<kKernel>(in, firstTileRow, tileRows, p, s);
  multiply(weights, tileRows * p.tilesW, p, s);
  if constexpr (flatTiles(kKernel))
    transformOutputFlat<kKernel>(bias, firstTileRow, tileRows, p, s, out);
  else
    transformOutputByRows<kKernel>(bias, firstTileRow, tileRows, p, s, out);
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
ItemKernel itemKernel(const Plan& p) {
  return p.kernel == 3 ? highwayKernel(&N_AVX3::runItem<3>, &N_AVX2::runItem<3>)
                       : highwayKernel(&N_AVX3::runItem<5>, &N_AVX2::runItem<5>);
}
#endif

// Every item, then f on the item's output rows of each plane while they are in cache.
void run(const Plan& p, const float* in, const float* bias, float* out, float* scratch,
         const FusedActivation& f) {
#ifdef DL4CPP_X86_KERNELS
  const ItemKernel item = itemKernel(p);
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
    const int64_t firstRow = 2 * firstTileRow;
    const int64_t rows = std::min(2 * p.tileRowsPerItem, p.outH - firstRow);
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
  const winograd::Plan p = winograd::forwardPlan(x, w, g);
  return p.weightFloats() + threads * p.threadFloats();
}

int64_t winogradBackwardDataScratchFloats(const Shape& dx, const Shape& w, const WindowGeometry& g,
                                          int threads) {
  if (winograd::flatTiles(g.kernelH)) {
    const winograd::Plan p = winograd::adjointPlan(dx, w, g);
    return p.weightFloats() + threads * p.adjointThreadFloats();
  }
  const winograd::Plan p = winograd::backwardDataPlan(dx, w, g);
  return p.weightFloats() + threads * p.threadFloats();
}

void winogradConvolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                                const WindowGeometry& g, float* scratch, const FusedActivation& f) {
  winograd::checkSupported(g, w.shape(), "forward");
  const winograd::Plan p = winograd::forwardPlan(x.shape(), w.shape(), g);
  winograd::transformWeights(w, winograd::WeightsFor::Forward, scratch);
  winograd::run(p, x.data(), b.empty() ? nullptr : b.data(), y.data(), scratch, f);
}

int64_t winogradConvolutionMaxPoolingForwardScratchFloats(const Shape& x, const Shape& w,
                                                          const WindowGeometry& g, int threads) {
  const winograd::Plan p = winograd::forwardPlan(x, w, g);
  return wholeCacheLines(p.weightFloats()) + threads * winograd::fusedThreadFloats(p);
}

void winogradConvolutionMaxPoolingForward(const Tensor& x, const Tensor& w, const Tensor& b,
                                          Tensor& pooled, const FusedActivation& f,
                                          const WindowGeometry& g, const WindowGeometry& poolG,
                                          uint8_t* argmax, float* scratch) {
  winograd::checkSupported(g, w.shape(), "forward with max pooling");
#ifdef DL4CPP_X86_KERNELS
  const winograd::Plan p = winograd::forwardPlan(x.shape(), w.shape(), g);
  winograd::transformWeights(w, winograd::WeightsFor::Forward, scratch);
  const winograd::ItemKernel item = winograd::itemKernel(p);
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
  if (winograd::flatTiles(g.kernelH)) {
    winograd::runAdjoint(winograd::adjointPlan(dx.shape(), w.shape(), g), dy, w, dx, scratch);
    return;
  }
  const winograd::Plan p = winograd::backwardDataPlan(dx.shape(), w.shape(), g);
  winograd::transformWeights(w, winograd::WeightsFor::ForwardOverGradient, scratch);
  winograd::run(p, dy.data(), nullptr, dx.data(), scratch, {});
}

}  // namespace dl4cpp::cpu
#endif  // HWY_ONCE
