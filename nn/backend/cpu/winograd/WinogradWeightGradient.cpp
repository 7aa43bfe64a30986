// The 3x3 Winograd weight gradient (WinogradConvolution.h), F(4x4, 3x3) with tiles in the lanes
// (the 5x5 one runs with images in the lanes: WinogradImageLanes.cpp). Highway compiles this file
// once per x86 level (HighwayTargets.h).
#include "nn/backend/cpu/HighwayTargets.h"

#ifdef DL4CPP_X86_KERNELS
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "nn/backend/cpu/winograd/WinogradWeightGradient.cpp"
// The per-target header after <hwy/highway.h>, on every pass of foreach_target:
// clang-format off
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include "nn/backend/cpu/winograd/WinogradKernels-inl.h"
// clang-format on
#endif

#include <algorithm>

#include "nn/backend/cpu/ParallelFor.h"
#include "nn/backend/cpu/winograd/WinogradConvolution.h"
#include "nn/backend/cpu/winograd/WinogradPlan.h"

#ifdef DL4CPP_X86_KERNELS
HWY_BEFORE_NAMESPACE();
namespace dl4cpp::cpu::HWY_NAMESPACE {
#if DL4CPP_HWY_KERNEL_TARGET
namespace {
using namespace winograd_kernels;

// --- Weight gradient: dU = Σ over tiles of dM ⊙ V per position, dM = A dY Aᵀ the transformed
// output gradient of each tile, then dW = Gᵀ dU G (in HWY_ONCE below).

// --- Weight gradient with tiles in the lanes (3x3, F(4x4, 3x3)): dU[position][o][c] = Σ over
// tiles of dM[position][o][t] · V[position][c][t], each sum a vector over tiles reduced at the
// item's end.

// F(4, 3)'s A: the 1-D expansion of four outputs' gradients y to the patch's six positions:
// y0, y0 + y1 + y2 + y3, y0 - y1 + y2 - y3, y0 + 2 y1 + 4 y2 + 8 y3, y0 - 2 y1 + 4 y2 - 8 y3, y3.
HWY_INLINE void gradientExpansion4(const V (&y)[4], V (&out)[6]) {
  const D d;
  const V even = hn::Add(y[0], y[2]), odd = hn::Add(y[1], y[3]);
  const V near = hn::MulAdd(hn::Set(d, 4.0f), y[2], y[0]);
  const V far = hn::MulAdd(hn::Set(d, 8.0f), y[3], hn::Add(y[1], y[1]));
  out[0] = y[0];
  out[1] = hn::Add(even, odd);
  out[2] = hn::Sub(even, odd);
  out[3] = hn::Add(near, far);
  out[4] = hn::Sub(near, far);
  out[5] = y[3];
}

// One output channel's tiles of dy: dM = A dY Aᵀ (4x4 to 6x6), from its padded rows (four per tile
// row, zeros past the output), into out[position * positionStride + tile] as the input's tiles, a
// tile row's tiles at a time. A row's last vector may run past tilesW: the next row's (or image's)
// stores overwrite those lanes, and the item's last row runs into the slack of tileStride.
void transformGradientChannel(const float* padded, int64_t tileRows, const Plan& p, float* out,
                              int64_t positionStride) {
  const D d;
  for (int64_t tr = 0; tr < tileRows; ++tr)
    for (int64_t t0 = 0; t0 < p.tilesW; t0 += kLanes) {
      V h[4][6];  // h[row]: A of the tile's output row `row`
      for (int row = 0; row < 4; ++row) {
        V y[4];
        hn::LoadInterleaved4(d, padded + (4 * tr + row) * p.paddedW + 4 * t0, y[0], y[1], y[2],
                             y[3]);
        gradientExpansion4(y, h[row]);
      }
      float* dst = out + tr * p.tilesW + t0;
      for (int j = 0; j < 6; ++j) {
        const V column[4] = {h[0][j], h[1][j], h[2][j], h[3][j]};
        V v[6];
        gradientExpansion4(column, v);
        for (int i = 0; i < 6; ++i) hn::StoreU(v[i], d, dst + (i * 6 + j) * positionStride);
      }
    }
}

// Output channels x input channels of sums of one position, each a vector over the tiles reduced
// at the end: at AVX-512 4 x 5 (20 sums, 9 loads a step), at AVX2 3 x 4 (12 sums, 7 loads; the
// input vectors go straight from memory into the FMAs, so the 12 sums and 3 dM vectors fit the 16
// registers).
#if HWY_TARGET == HWY_AVX3
constexpr int kTileLaneGradientOuts = 4, kTileLaneGradientIns = 5;
#else
constexpr int kTileLaneGradientOuts = 3, kTileLaneGradientIns = 4;
#endif

template <int kOut, int kIn>
void tileLaneGradientBlock(const float* dm, const float* v, int64_t tileStride, int64_t vectors,
                           float* du, int64_t duRow) {
  const D d;
  V acc[kOut][kIn];
  HWY_UNROLL(4)
  for (int o = 0; o < kOut; ++o) HWY_UNROLL(5)
  for (int c = 0; c < kIn; ++c) acc[o][c] = hn::Zero(d);
  for (int64_t t = 0; t < vectors * kLanes; t += kLanes) {
    V g[kOut];
    HWY_UNROLL(4)
    for (int o = 0; o < kOut; ++o) g[o] = hn::LoadU(d, dm + o * tileStride + t);
    HWY_UNROLL(5)
    for (int c = 0; c < kIn; ++c) {
      const V x = hn::LoadU(d, v + c * tileStride + t);
      HWY_UNROLL(4)
      for (int o = 0; o < kOut; ++o) acc[o][c] = hn::MulAdd(g[o], x, acc[o][c]);
    }
  }
  HWY_UNROLL(4)
  for (int o = 0; o < kOut; ++o) HWY_UNROLL(5)
  for (int c = 0; c < kIn; ++c) du[o * duRow + c] += hn::GetLane(hn::SumOfLanes(d, acc[o][c]));
}

using TileLaneGradientKernel = void (*)(const float*, const float*, int64_t, int64_t, float*,
                                        int64_t);
template <int kOut, int kIn>
struct TileLaneGradientKernelFor {
  static constexpr TileLaneGradientKernel kernel = &tileLaneGradientBlock<kOut, kIn>;
};
constexpr auto kTileLaneGradientKernels =
    kernelTable<TileLaneGradientKernelFor, kTileLaneGradientOuts, kTileLaneGradientIns>();

// One item's part of dU (`du`, [position][out][in]) and of the bias gradient (the sum of a tile's
// dy is its dM at position (1, 1)), with tiles in the lanes: tile rows of one image, or
// (imagesPerItem > 1) whole images, their tiles one after the other.
void gradientItem(const float* x, const float* dy, int64_t images, int64_t firstTileRow,
                  const Plan& p, float* scratch, float* du, float* dbias) {
  const D d;
  const ItemScratch s = itemScratch(p, scratch);
  const int64_t tileRows = std::min(p.tileRowsPerItem, p.tilesH - firstTileRow);
  const int64_t imageTiles = tileRows * p.tilesW;
  const int64_t vectors = (images * imageTiles + kLanes - 1) / kLanes;
  const int64_t positionStride = p.productPositionStride();
  for (int64_t n = 0; n < images; ++n) {
    transformInput(x + n * p.inChannels * p.inH * p.inW, firstTileRow, tileRows, p, s,
                   n * imageTiles);
    padChannels(
        dy + n * p.outChannels * p.outH * p.outW, p.outChannels, p.outH, p.outW,
        kTile * firstTileRow, kTile * tileRows, 0, p, s.padded, [&](int64_t o, const float* rows) {
          transformGradientChannel(rows, tileRows, p,
                                   s.products + o * p.tileStride + n * imageTiles, positionStride);
        });
  }
  // The last vector's lanes past the item's tiles hold what the scratch held before (an earlier
  // item's tiles, or anything, NaN included): zero them in dM and in V, so that they add nothing.
  const int64_t tiles = images * imageTiles;
  const auto zeroPastTiles = [&](float* rows, int64_t channels, int64_t positionStride) {
    for (int64_t position = 0; position < p.positions(); ++position)
      for (int64_t c = 0; c < channels; ++c) {
        float* row = rows + position * positionStride + c * p.tileStride;
        std::fill(row + tiles, row + vectors * kLanes, 0.0f);
      }
  };
  zeroPastTiles(s.products, p.outChannels, positionStride);
  zeroPastTiles(s.transformed, p.inChannels, p.transformedPositionStride());
  for (int64_t position = 0; position < p.positions(); ++position) {
    const float* dm = s.products + position * positionStride;
    const float* v = s.transformed + position * p.transformedPositionStride();
    float* part = du + position * p.outChannels * p.inChannels;
    for (int64_t o = 0; o < p.outChannels; o += kTileLaneGradientOuts) {
      const int64_t outs = std::min<int64_t>(kTileLaneGradientOuts, p.outChannels - o);
      for (int64_t c = 0; c < p.inChannels; c += kTileLaneGradientIns) {
        const int64_t ins = std::min<int64_t>(kTileLaneGradientIns, p.inChannels - c);
        kTileLaneGradientKernels[static_cast<size_t>(outs - 1)][static_cast<size_t>(ins - 1)](
            dm + o * p.tileStride, v + c * p.tileStride, p.tileStride, vectors,
            part + o * p.inChannels + c, p.inChannels);
      }
    }
  }
  const float* sums = s.products + (kPatch + 1) * positionStride;  // position (1, 1)
  for (int64_t o = 0; o < p.outChannels; ++o) {
    V total = hn::Zero(d);
    for (int64_t t = 0; t < vectors * kLanes; t += kLanes)
      total = hn::Add(total, hn::LoadU(d, sums + o * p.tileStride + t));
    dbias[o] += hn::GetLane(hn::SumOfLanes(d, total));
  }
}

}  // namespace
#endif  // DL4CPP_HWY_KERNEL_TARGET
}  // namespace dl4cpp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
#endif  // DL4CPP_X86_KERNELS

#if !defined(DL4CPP_X86_KERNELS) || HWY_ONCE
namespace dl4cpp::cpu {

int64_t winogradBackwardWeightsScratchFloats(const Shape& x, const Shape& dw,
                                             const WindowGeometry& g, int threads) {
  if (winograd::imagesInLanes(g))
    return winograd::laneBackwardWeightsScratchFloats(winograd::lanePlan(x, dw, g), threads);
  const winograd::Plan p = winograd::gradientPlan(x, dw, g);
  return threads * p.threadFloats() + winograd::chunksOf(p.groups()).count * p.gradientPartFloats();
}

void winogradConvolutionBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                                        const WindowGeometry& g, float* scratch) {
  winograd::checkSupported(g, dw.shape(), "backward weights");
  if (winograd::imagesInLanes(g)) {
    winograd::runLaneBackwardWeights(winograd::lanePlan(x.shape(), dw.shape(), g), x, dy, dw, db,
                                     scratch);
    return;
  }
#ifdef DL4CPP_X86_KERNELS
  const winograd::Plan p = winograd::gradientPlan(x.shape(), dw.shape(), g);
  const int threads = singleThreaded() ? 1 : omp_get_max_threads();
  const int64_t partFloats = p.gradientPartFloats();
  const int64_t biasOffset = partFloats - p.paddedOutChannels();
  float* total = scratch + threads * p.threadFloats();
  const auto item = highwayKernel(&N_AVX3::gradientItem, &N_AVX2::gradientItem);
  const int64_t inImage = p.inChannels * p.inH * p.inW, outImage = p.outChannels * p.outH * p.outW;
  winograd::sumInChunks(p.groups(), partFloats, total, [&](int64_t group, int thread, float* part) {
    for (int64_t row = 0; row < p.tilesH; row += p.tileRowsPerItem) {
      const int64_t n = group * p.imagesPerItem;
      item(x.data() + n * inImage, dy.data() + n * outImage,
           std::min(p.imagesPerItem, p.images - n), row, p, scratch + thread * p.threadFloats(),
           part, part + biasOffset);
    }
  });
  winograd::weightsFromTransformed(total, p, dw);
  if (!db.empty()) std::copy(total + biasOffset, total + biasOffset + p.outChannels, db.data());
#else
  (void)x, (void)dy, (void)dw, (void)db, (void)scratch;
#endif
}

}  // namespace dl4cpp::cpu
#endif  // HWY_ONCE
