// The Winograd weight gradient (WinogradConvolution.h), with tiles in the lanes (3x3, F(4x4, 3x3))
// or output channels in the lanes (5x5, F(2x2, 5x5); WinogradPlan.h, channelLanesGradient). Highway
// compiles this file once per x86 level (HighwayTargets.h).
#include <dl4cpp/nn/backend/cpu/HighwayTargets.h>

#ifdef DL4CPP_X86_KERNELS
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dl4cpp/nn/backend/cpu/WinogradWeightGradient.cpp"
// The per-target header after <hwy/highway.h>, on every pass of foreach_target:
// clang-format off
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <dl4cpp/nn/backend/cpu/WinogradKernels-inl.h>
// clang-format on
#endif

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

// --- Weight gradient: dU = Σ over tiles of dM ⊙ V per position, dM = A dY Aᵀ the transformed
// output gradient of each tile, then dW = Gᵀ dU G (in HWY_ONCE below). With tiles in the lanes
// (3x3) or with output channels in the lanes (5x5; WinogradPlan.h says why).

// A tile's dM = A dY Aᵀ from its two rows already expanded (h[row] = A of the row's two outputs):
// A down each patch column, into dst[position * positionStride].
template <int kKernel>
HWY_INLINE void storeGradientTile(const V (&h)[2][kPatch], float* dst, int64_t positionStride) {
  const D d;
  for (int j = 0; j < kPatch; ++j) {
    V v[kPatch];
    gradientExpansion<kKernel>(h[0][j], h[1][j], v);
    for (int i = 0; i < kPatch; ++i) hn::StoreU(v[i], d, dst + (i * kPatch + j) * positionStride);
  }
}

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
void gradientItemTileLanes(const float* x, const float* dy, int64_t images, int64_t firstTileRow,
                           const Plan& p, float* scratch, float* du, float* dbias) {
  constexpr int kKernel = 3, kTile = kTileOf<kKernel>;
  const D d;
  const ItemScratch s = itemScratch(p, scratch);
  const int64_t tileRows = std::min(p.tileRowsPerItem, p.tilesH - firstTileRow);
  const int64_t imageTiles = tileRows * p.tilesW;
  const int64_t vectors = (images * imageTiles + kLanes - 1) / kLanes;
  const int64_t positionStride = p.productPositionStride();
  for (int64_t n = 0; n < images; ++n) {
    transformInput<kKernel>(x + n * p.inChannels * p.inH * p.inW, firstTileRow, tileRows, p, s,
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

// --- Weight gradient with output channels in the lanes (5x5): dU[position][c][o] = Σ over tiles
// of V[position][c][t] · dMᵀ[position][t][o]. Each block's sums are whole vectors of dU, added to
// in place, so no sum is reduced across lanes and no item needs to be large.

// One image's tile rows of dy: dMᵀ = A dY Aᵀ of each tile (2x2 to the patch's size), for vectors
// of output channels, into out[position * positionStride + tile * paddedOutChannels + o]. The
// rows are first transposed to rows[(row * 2 tilesW + column) * paddedOutChannels + o], zeros past
// the output and past the channels.
template <int kKernel>
void transformGradientChannelLanes(const float* dyImage, int64_t firstTileRow, int64_t tileRows,
                                   const Plan& p, float* rows, float* out, int64_t positionStride) {
  const D d;
  const int64_t channels = p.paddedOutChannels(), width = 2 * p.tilesW;
  const int64_t outRows = std::min(2 * tileRows, p.outH - 2 * firstTileRow);
  std::fill(rows, rows + 2 * tileRows * width * channels, 0.0f);
  for (int64_t o = 0; o < p.outChannels; ++o)
    for (int64_t y = 0; y < outRows; ++y) {
      const float* src = dyImage + (o * p.outH + 2 * firstTileRow + y) * p.outW;
      for (int64_t x = 0; x < p.outW; ++x) rows[(y * width + x) * channels + o] = src[x];
    }
  for (int64_t tr = 0; tr < tileRows; ++tr)
    for (int64_t tc = 0; tc < p.tilesW; ++tc)
      for (int64_t o = 0; o < p.outChannels; o += kLanes) {
        const float* at = rows + (2 * tr * width + 2 * tc) * channels + o;
        V h[2][kPatch];
        for (int r = 0; r < 2; ++r)
          gradientExpansion<kKernel>(hn::LoadU(d, at + r * width * channels),
                                     hn::LoadU(d, at + r * width * channels + channels), h[r]);
        storeGradientTile<kKernel>(h, out + (tr * p.tilesW + tc) * channels + o, positionStride);
      }
}

// Input channels x vectors of output channels of one position's sums over the item's tiles, added
// to du[c * duRow + o] (one sum per item, not one running sum over every tile, keeps the rounding
// of large images in check): at AVX-512 5 x 4 (20 sums, 4 loads and 5 broadcasts a step), at AVX2
// 4 x 3 (12 sums, 3 loads and 4 broadcasts).
#if HWY_TARGET == HWY_AVX3
constexpr int kChannelLaneGradientIns = 5, kChannelLaneGradientOutVectors = 4;
#else
constexpr int kChannelLaneGradientIns = 4, kChannelLaneGradientOutVectors = 3;
#endif

template <int kIns, int kOutVectors>
void channelLaneGradientBlock(const float* v, int64_t tileStride, const float* dm, int64_t dmRow,
                              int64_t tiles, float* du, int64_t duRow) {
  const D d;
  V acc[kIns][kOutVectors];
  HWY_UNROLL(5)
  for (int c = 0; c < kIns; ++c) HWY_UNROLL(4)
  for (int o = 0; o < kOutVectors; ++o) acc[c][o] = hn::Zero(d);
  for (int64_t t = 0; t < tiles; ++t) {
    V g[kOutVectors];
    HWY_UNROLL(4)
    for (int o = 0; o < kOutVectors; ++o) g[o] = hn::LoadU(d, dm + t * dmRow + o * kLanes);
    HWY_UNROLL(5)
    for (int c = 0; c < kIns; ++c) {
      const V x = hn::Set(d, v[c * tileStride + t]);
      HWY_UNROLL(4)
      for (int o = 0; o < kOutVectors; ++o) acc[c][o] = hn::MulAdd(x, g[o], acc[c][o]);
    }
  }
  HWY_UNROLL(5)
  for (int c = 0; c < kIns; ++c) HWY_UNROLL(4)
  for (int o = 0; o < kOutVectors; ++o) {
    float* sum = du + c * duRow + o * kLanes;
    hn::StoreU(hn::Add(hn::LoadU(d, sum), acc[c][o]), d, sum);
  }
}

using ChannelLaneGradientKernel = void (*)(const float*, int64_t, const float*, int64_t, int64_t,
                                           float*, int64_t);
template <int kIns, int kOutVectors>
struct ChannelLaneGradientKernelFor {
  static constexpr ChannelLaneGradientKernel kernel = &channelLaneGradientBlock<kIns, kOutVectors>;
};
constexpr auto kChannelLaneGradientKernels =
    kernelTable<ChannelLaneGradientKernelFor, kChannelLaneGradientIns,
                kChannelLaneGradientOutVectors>();

// One item's part of dU (`du`, [position][in][padded out]) and of the bias gradient (`dbias`; the
// sum of a tile's dy is its dM at position (1, 1)), with output channels in the lanes: tile rows of
// one image, or (imagesPerItem > 1) whole images, their tiles one after the other.
template <int kKernel>
void gradientItemChannelLanes(const float* x, const float* dy, int64_t images, int64_t firstTileRow,
                              const Plan& p, float* scratch, float* du, float* dbias) {
  const D d;
  const ItemScratch s = itemScratch(p, scratch);
  float* dyRows = s.products + p.gradientTransformFloats();
  const int64_t tileRows = std::min(p.tileRowsPerItem, p.tilesH - firstTileRow);
  const int64_t imageTiles = tileRows * p.tilesW, tiles = images * imageTiles;
  const int64_t channels = p.paddedOutChannels(), positionStride = p.gradientPositionStride();
  for (int64_t n = 0; n < images; ++n) {
    transformInput<kKernel>(x + n * p.inChannels * p.inH * p.inW, firstTileRow, tileRows, p, s,
                            n * imageTiles);
    transformGradientChannelLanes<kKernel>(dy + n * p.outChannels * p.outH * p.outW, firstTileRow,
                                           tileRows, p, dyRows,
                                           s.products + n * imageTiles * channels, positionStride);
  }
  const int64_t vectors = (p.outChannels + kLanes - 1) / kLanes;
  const int64_t blocks = evenBlocks(vectors, kChannelLaneGradientOutVectors);
  for (int64_t position = 0; position < p.positions(); ++position) {
    const float* dm = s.products + position * positionStride;
    const float* v = s.transformed + position * p.transformedPositionStride();
    float* part = du + position * p.inChannels * channels;
    for (int64_t i = 0, o = 0; i < blocks; ++i) {
      const int64_t block = evenBlock(vectors, blocks, i);
      for (int64_t c = 0; c < p.inChannels; c += kChannelLaneGradientIns) {
        const int64_t ins = std::min<int64_t>(kChannelLaneGradientIns, p.inChannels - c);
        kChannelLaneGradientKernels[static_cast<size_t>(ins - 1)][static_cast<size_t>(block - 1)](
            v + c * p.tileStride, p.tileStride, dm + o * kLanes, channels, tiles,
            part + c * channels + o * kLanes, channels);
      }
      o += block;
    }
  }
  const float* sums = s.products + (kPatch + 1) * positionStride;  // position (1, 1)
  for (int64_t o = 0; o < vectors * kLanes; o += kLanes) {
    V total = hn::LoadU(d, dbias + o);
    for (int64_t t = 0; t < tiles; ++t)
      total = hn::Add(total, hn::LoadU(d, sums + t * channels + o));
    hn::StoreU(total, d, dbias + o);
  }
}

template <int kKernel>
void gradientItem(const float* x, const float* dy, int64_t images, int64_t firstTileRow,
                  const Plan& p, float* scratch, float* du, float* dbias) {
  if constexpr (channelLanesGradient(kKernel))
    gradientItemChannelLanes<kKernel>(x, dy, images, firstTileRow, p, scratch, du, dbias);
  else
    gradientItemTileLanes(x, dy, images, firstTileRow, p, scratch, du, dbias);
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

// The images' groups are summed in at most this many chunks of consecutive groups, each chunk's
// part of dU and of the bias gradient on its own, the parts then added in chunk order: a split
// that depends on the batch only, so that the result does not depend on the thread count.
constexpr int64_t kMaxChunks = 16;

struct Chunks {
  int64_t count, groupsPerChunk;
};

Chunks chunksOf(const Plan& p) {
  const int64_t groups = (p.images + p.imagesPerItem - 1) / p.imagesPerItem;
  const int64_t perChunk = (groups + kMaxChunks - 1) / kMaxChunks;
  return {(groups + perChunk - 1) / perChunk, perChunk};
}

}  // namespace
}  // namespace winograd

int64_t winogradBackwardWeightsScratchFloats(const Shape& x, const Shape& dw,
                                             const WindowGeometry& g, int threads) {
  const winograd::Plan p = winograd::gradientPlan(x, dw, g);
  return threads * p.gradientThreadFloats() + winograd::chunksOf(p).count * p.gradientPartFloats();
}

void winogradConvolutionBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                                        const WindowGeometry& g, float* scratch) {
  winograd::checkSupported(g, dw.shape(), "backward weights");
#ifdef DL4CPP_X86_KERNELS
  const winograd::Plan p = winograd::gradientPlan(x.shape(), dw.shape(), g);
  const int threads = singleThreaded() ? 1 : omp_get_max_threads();
  const winograd::Chunks chunks = winograd::chunksOf(p);
  const int64_t partFloats = p.gradientPartFloats();
  const int64_t biasOffset = partFloats - p.paddedOutChannels();
  float* parts = scratch + threads * p.gradientThreadFloats();
  const auto item = p.kernel == 3
                        ? highwayKernel(&N_AVX3::gradientItem<3>, &N_AVX2::gradientItem<3>)
                        : highwayKernel(&N_AVX3::gradientItem<5>, &N_AVX2::gradientItem<5>);
  const int64_t inImage = p.inChannels * p.inH * p.inW, outImage = p.outChannels * p.outH * p.outW;
  const int64_t groups = (p.images + p.imagesPerItem - 1) / p.imagesPerItem;
  parallelForOnThreads(chunks.count, [&](int64_t chunk, int thread) {
    // Zeroed here, on the thread that adds into it, so that it is in that thread's cache.
    float* part = parts + chunk * partFloats;
    std::fill(part, part + partFloats, 0.0f);
    const int64_t last = std::min(groups, (chunk + 1) * chunks.groupsPerChunk);
    for (int64_t group = chunk * chunks.groupsPerChunk; group < last; ++group)
      for (int64_t row = 0; row < p.tilesH; row += p.tileRowsPerItem) {
        const int64_t n = group * p.imagesPerItem;
        item(x.data() + n * inImage, dy.data() + n * outImage,
             std::min(p.imagesPerItem, p.images - n), row, p,
             scratch + thread * p.gradientThreadFloats(), part, part + biasOffset);
      }
  });
  // The chunks' parts, added in chunk order into the first.
  float* total = parts;
  parallelRanges(partFloats, [&](int64_t begin, int64_t end) {
    for (int64_t chunk = 1; chunk < chunks.count; ++chunk) {
      const float* part = parts + chunk * partFloats;
      for (int64_t i = begin; i < end; ++i) total[i] += part[i];
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
