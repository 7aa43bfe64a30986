// The per-level pieces the Winograd kernel files share (WinogradConvolution.cpp,
// WinogradAdjoint.cpp, WinogradWeightGradient.cpp): the 1-D transforms, the padded input rows and
// their transform, and the per-position products. A Highway per-target header: each of those files
// includes it after <hwy/highway.h>, so that it is compiled once per level with them
// (HighwayTargets.h).

// Highway's per-target include guard: toggled on every pass of foreach_target.
#if defined(DL4CPP_WINOGRAD_KERNELS_INL_H_) == defined(HWY_TARGET_TOGGLE)  // NOLINT
#ifdef DL4CPP_WINOGRAD_KERNELS_INL_H_
#undef DL4CPP_WINOGRAD_KERNELS_INL_H_
#else
#define DL4CPP_WINOGRAD_KERNELS_INL_H_
#endif

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>

#include "nn/backend/cpu/AlignedRows.h"
#include "nn/backend/cpu/HighwayTargets.h"
#include "nn/backend/cpu/KernelTable.h"
#include "nn/backend/cpu/winograd/WinogradPlan.h"

HWY_BEFORE_NAMESPACE();
namespace dl4cpp::cpu::HWY_NAMESPACE {
#if DL4CPP_HWY_KERNEL_TARGET
namespace winograd_kernels {
namespace hn = hwy::HWY_NAMESPACE;
using namespace winograd;
using D = hn::ScalableTag<float>;
using V = hn::Vec<D>;
constexpr int64_t kLanes = HWY_LANES(float);

// Output channels x vectors of tiles of one position's product held in registers over the input
// channels, as many output channels as the registers hold beside the tile vectors and the
// broadcast weight: at AVX-512 (32 registers) 8 x 3, 12 x 2 or 24 x 1; at AVX2 (16) 4 x 3, 6 x 2 or
// 12 x 1. Every block keeps 24 or 12 independent sums, more than the 8 FMAs two pipes need in
// flight to hide their latency.
constexpr int kMaxTileVectors = 3;
#if HWY_TARGET == HWY_AVX3
constexpr int kSums = 24;
#else
constexpr int kSums = 12;
#endif
constexpr int kMaxOutBlock = kSums;
constexpr int64_t outBlockFor(int64_t vectors) { return kSums / vectors; }

// F(4, 3)'s 1-D input transform Bᵀ d of a 6x6 patch's row or column (the points 0, ±1, ±2 and ∞;
// Lavin and Gray's): 4 d0 - 5 d2 + d4, (d4 - 4 d2) ± (d3 - 4 d1),
// (d4 - d2) ± 2 (d3 - d1), 4 d1 - 5 d3 + d5.
HWY_INLINE void inputTransform(const V (&d)[kPatch], V (&out)[kPatch]) {
  const D df;
  const V two = hn::Set(df, 2.0f), four = hn::Set(df, 4.0f), five = hn::Set(df, 5.0f);
  out[0] = hn::MulAdd(four, d[0], hn::NegMulAdd(five, d[2], d[4]));
  const V a = hn::NegMulAdd(four, d[2], d[4]), b = hn::NegMulAdd(four, d[1], d[3]);
  out[1] = hn::Add(a, b);
  out[2] = hn::Sub(a, b);
  const V c = hn::Sub(d[4], d[2]), e = hn::Sub(d[3], d[1]);
  out[3] = hn::MulAdd(two, e, c);
  out[4] = hn::NegMulAdd(two, e, c);
  out[5] = hn::MulAdd(four, d[1], hn::NegMulAdd(five, d[3], d[5]));
}

// A row's patch columns for kLanes tiles of kTile outputs from `in` on (the first tile's first
// column): column j of tile t is in[kTile t + j], loaded as interleaved groups of kTile vectors.
template <int kTile>
HWY_INLINE void loadPatchColumns(const float* in, V (&columns)[kPatch]) {
  const D d;
  if constexpr (kTile == 2) {
    for (int j = 0; j < kPatch; j += 2) hn::LoadInterleaved2(d, in + j, columns[j], columns[j + 1]);
  } else {
    static_assert(kTile == 4);
    V unused[2];
    hn::LoadInterleaved4(d, in, columns[0], columns[1], columns[2], columns[3]);
    hn::LoadInterleaved4(d, in + 4, columns[4], columns[5], unused[0], unused[1]);
  }
}

// One input channel of an item: every tile's V = Bᵀ d B, from the zero-padded rows of the channel,
// into out[position * positionStride + tile] (tile = row · tilesW + column), with vectors of
// consecutive tiles across tile rows (WinogradPlan.h), in two steps. First Bᵀ along each padded row
// y = kTile r + phase: the transform of the patch columns of every tile of the row, into plane
// (patch column j, phase) of `rows`, at row r. A patch's row kTile q + phase of the tile in tile
// row tr is then padded row kTile (tr + q) + phase: it sits q rows into that plane from the tile's
// own index. So the second step, Bᵀ down the patch's rows, reads whole vectors of consecutive tiles
// across tile rows, however narrow the rows. Vectors may run past a row's tiles (the next row's
// stores overwrite those lanes, and the plane has a vector's slack) and past the item's last tile
// (into the slack of tileStride).
inline void transformInputChannel(const float* padded, int64_t tileRows, const Plan& p, float* rows,
                                  float* out, int64_t positionStride) {
  const D d;
  const int64_t plane = p.rowTransformPlane();
  for (int64_t y = 0; y < kTile * tileRows + kKernel - 1; ++y) {
    float* dst = rows + (y % kTile) * plane + (y / kTile) * p.tilesW;
    for (int64_t t0 = 0; t0 < p.tilesW; t0 += kLanes) {
      V columns[kPatch], h[kPatch];
      loadPatchColumns<kTile>(padded + y * p.paddedW + kTile * t0, columns);
      inputTransform(columns, h);
      for (int j = 0; j < kPatch; ++j) hn::StoreU(h[j], d, dst + j * kTile * plane + t0);
    }
  }
  for (int64_t t = 0; t < tileRows * p.tilesW; t += kLanes)
    for (int j = 0; j < kPatch; ++j) {
      V column[kPatch], v[kPatch];
      for (int row = 0; row < kPatch; ++row)
        column[row] =
            hn::LoadU(d, rows + (j * kTile + row % kTile) * plane + row / kTile * p.tilesW + t);
      inputTransform(column, v);
      for (int i = 0; i < kPatch; ++i)
        hn::StoreU(v[i], d, out + (i * kPatch + j) * positionStride + t);
    }
}

// Rows [first, last) of a plane `width` floats wide, from row firstRow on, into padded rows at
// column `column`: whole vectors, the last one loaded under a mask and stored whole (its zeros land
// in the padding, which has room). Nothing else is written: the rest stays as its caller zeroed it.
inline void padChannel(const float* plane, int64_t width, int64_t firstRow, int64_t first,
                       int64_t last, int64_t column, const Plan& p, float* padded) {
  const D d;
  for (int64_t r = first; r < last; ++r) {
    const float* src = plane + (firstRow + r) * width;
    float* dst = padded + r * p.paddedW + column;
    for (int64_t j = 0; j < width; j += kLanes) {
      const auto lanes = hn::FirstN(d, static_cast<size_t>(width - j));
      hn::StoreU(hn::MaskedLoad(lanes, d, src + j), d, dst + j);
    }
  }
}

// Channel by channel, a plane's padded rows, then transform(channel, its rows). The rows go to two
// alternating slots, the next channel's written while this one's are transformed: a load right
// behind the stores it overlaps would wait for them (no store-to-load forwarding across unaligned
// vectors).
template <typename Transform>
void padChannels(const float* image, int64_t channels, int64_t height, int64_t width,
                 int64_t firstRow, int64_t rows, int64_t column, const Plan& p, float* padded,
                 const Transform& transform) {
  const D d;
  const int64_t slot = p.paddedRows() * p.paddedW;
  for (int64_t i = 0; i < 2 * slot; i += kLanes) hn::StoreU(hn::Zero(d), d, padded + i);
  const int64_t first = std::max<int64_t>(0, -firstRow);
  const int64_t last = std::min<int64_t>(rows, height - firstRow);
  padChannel(image, width, firstRow, first, last, column, p, padded);
  for (int64_t c = 0; c < channels; ++c) {
    // The rows two channels ahead: a short run of lines per channel, too short for the
    // hardware's prefetchers (without it the copies below stall on loads of x from L3).
    if (c + 2 < channels) {
      const float* ahead = image + (c + 2) * height * width + (firstRow + first) * width;
      for (int64_t i = 0; i < (last - first) * width; i += kCacheLineFloats)
        hwy::Prefetch(ahead + i);
    }
    if (c + 1 < channels)
      padChannel(image + (c + 1) * height * width, width, firstRow, first, last, column, p,
                 padded + ((c + 1) % 2) * slot);
    transform(c, padded + (c % 2) * slot);
  }
}

// The tiles of an image's tile rows [firstTileRow, + tileRows), from tile `first` of the item on.
inline void transformInput(const float* image, int64_t firstTileRow, int64_t tileRows,
                           const Plan& p, const ItemScratch& s, int64_t first = 0) {
  // The planes' slack reaches the last vector's lanes past the item's tiles: zeros there keep
  // whatever the scratch held before (NaN, say) out of the products.
  std::fill(s.rowTransforms, s.rowTransforms + p.rowTransformFloats(), 0.0f);
  padChannels(image, p.inChannels, p.inH, p.inW, kTile * firstTileRow - p.padTop,
              kTile * tileRows + kKernel - 1, p.padLeft, p, s.padded,
              [&](int64_t c, const float* padded) {
                float* out = s.transformed + c * p.tileStride + first;
                const int64_t positionStride = p.transformedPositionStride();
                transformInputChannel(padded, tileRows, p, s.rowTransforms, out, positionStride);
              });
}

// products[o][t] = Σ_c weights[c][o] · tiles[c][t] for kOut output channels and kVectors vectors
// of tiles of one position, the sums in registers over all input channels.
template <int kOut, int kVectors>
void productBlock(const float* weights, int64_t weightStride, const float* tiles,
                  int64_t tileStride, float* products, int64_t channels) {
  const D d;
  V acc[kOut][kVectors];
  HWY_UNROLL(24)
  for (int o = 0; o < kOut; ++o) HWY_UNROLL(3)
  for (int v = 0; v < kVectors; ++v) acc[o][v] = hn::Zero(d);
  for (int64_t c = 0; c < channels; ++c) {
    V in[kVectors];
    HWY_UNROLL(3)
    for (int v = 0; v < kVectors; ++v) in[v] = hn::LoadU(d, tiles + c * tileStride + v * kLanes);
    HWY_UNROLL(24)
    for (int o = 0; o < kOut; ++o) {
      const V w = hn::Set(d, weights[c * weightStride + o]);
      HWY_UNROLL(3)
      for (int v = 0; v < kVectors; ++v) acc[o][v] = hn::MulAdd(w, in[v], acc[o][v]);
    }
  }
  HWY_UNROLL(24)
  for (int o = 0; o < kOut; ++o) HWY_UNROLL(3)
  for (int v = 0; v < kVectors; ++v)
    hn::StoreU(acc[o][v], d, products + o * tileStride + v * kLanes);
}

using ProductKernel = void (*)(const float*, int64_t, const float*, int64_t, float*, int64_t);
template <int kOut, int kVectors>
struct ProductKernelFor {
  static constexpr ProductKernel kernel = &productBlock<kOut, kVectors>;
};
constexpr auto kProductKernels = kernelTable<ProductKernelFor, kMaxOutBlock, kMaxTileVectors>();

// `count` vectors cut into blocks of at most `most`, as even as can be (7 into 3s: 3 + 2 + 2):
// evenBlocks(count, most) blocks, block i of evenBlock(count, blocks, i) vectors.
constexpr int64_t evenBlocks(int64_t count, int64_t most) { return (count + most - 1) / most; }
constexpr int64_t evenBlock(int64_t count, int64_t blocks, int64_t i) {
  return count / blocks + (i < count % blocks ? 1 : 0);
}

inline void multiply(const float* weights, int64_t tiles, const Plan& p, const ItemScratch& s) {
  const int64_t vectors = (tiles + kLanes - 1) / kLanes;
  for (int64_t position = 0; position < p.positions(); ++position) {
    const float* u = weights + position * p.inChannels * p.outChannels;
    const float* v = s.transformed + position * p.transformedPositionStride();
    float* m = s.products + position * p.productPositionStride();
    const int64_t blocks = evenBlocks(vectors, kMaxTileVectors);
    for (int64_t i = 0, t = 0; i < blocks; ++i) {
      const int64_t block = evenBlock(vectors, blocks, i);
      for (int64_t o = 0; o < p.outChannels; o += outBlockFor(block)) {
        const int64_t outBlock = std::min<int64_t>(outBlockFor(block), p.outChannels - o);
        kProductKernels[static_cast<size_t>(outBlock - 1)][static_cast<size_t>(block - 1)](
            u + o, p.outChannels, v + t * kLanes, p.tileStride, m + o * p.tileStride + t * kLanes,
            p.inChannels);
      }
      t += block;
    }
  }
}

inline ItemScratch itemScratch(const Plan& p, float* scratch) {
  float* rowTransforms = scratch + 2 * p.paddedRows() * p.paddedW;
  float* transformed = rowTransforms + p.rowTransformFloats();
  return {scratch, rowTransforms, transformed, transformed + p.transformedFloats()};
}

}  // namespace winograd_kernels
#endif  // DL4CPP_HWY_KERNEL_TARGET
}  // namespace dl4cpp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // DL4CPP_WINOGRAD_KERNELS_INL_H_
