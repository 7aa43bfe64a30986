// Highway compiles this file once per x86 level (HighwayTargets.h): the tile transforms and the
// products below are written once, for vectors of kLanes tiles (16 at avx512, 8 at avx2), with
// register blocks sized to each level's register file.
#include <dl4cpp/nn/backend/cpu/HighwayTargets.h>

#ifdef DL4CPP_X86_KERNELS
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dl4cpp/nn/backend/cpu/WinogradConvolution.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#endif

#include <dl4cpp/nn/Error.h>
#include <dl4cpp/nn/backend/cpu/KernelTable.h>
#include <dl4cpp/nn/backend/cpu/MaxPooling.h>
#include <dl4cpp/nn/backend/cpu/ParallelFor.h>
#include <dl4cpp/nn/backend/cpu/WinogradConvolution.h>
#include <dl4cpp/nn/backend/cpu/WinogradPlan.h>

#include <algorithm>
#include <string>

#ifdef DL4CPP_X86_KERNELS
HWY_BEFORE_NAMESPACE();
namespace dl4cpp::cpu::HWY_NAMESPACE {
#if DL4CPP_HWY_KERNEL_TARGET
namespace {
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

// The 1-D input transform Bᵀ d of kKernel + 1 values. F(2, 3): d0 - d2, d1 + d2, d2 - d1, d1 - d3.
// F(2, 5), on the points 0, ±1, ±2 and ∞ (the input transform of Lavin and Gray's F(4, 3)):
// 4 d0 - 5 d2 + d4, (d4 - 4 d2) ± (d3 - 4 d1), (d4 - d2) ± 2 (d3 - d1), 4 d1 - 5 d3 + d5.
template <int kKernel>
HWY_INLINE void inputTransform(const V (&d)[kKernel + 1], V (&out)[kKernel + 1]) {
  if constexpr (kKernel == 3) {
    out[0] = hn::Sub(d[0], d[2]);
    out[1] = hn::Add(d[1], d[2]);
    out[2] = hn::Sub(d[2], d[1]);
    out[3] = hn::Sub(d[1], d[3]);
  } else {
    static_assert(kKernel == 5);
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
}

// One input channel of an item: every tile's V = Bᵀ d B, from the zero-padded rows of the
// channel, into out[position * positionStride + tile] (tile = row · tilesW + column), a tile row's
// tiles at a time. A row's last vector may run past tilesW: the next row's vectors, stored after
// it, overwrite those lanes, and the item's last row runs into the slack of tileStride.
template <int kKernel>
void transformInputChannelByRows(const float* padded, int64_t tileRows, const Plan& p, float* out,
                                 int64_t positionStride) {
  constexpr int kPatch = kKernel + 1;
  const D d;
  for (int64_t tr = 0; tr < tileRows; ++tr)
    for (int64_t t0 = 0; t0 < p.tilesW; t0 += kLanes) {
      V h[kPatch][kPatch];  // h[row][j]: the 1-D transform of patch row `row`
      for (int row = 0; row < kPatch; ++row) {
        const float* in = padded + (2 * tr + row) * p.paddedW + 2 * t0;
        V columns[kPatch];  // the patch's columns of kLanes tiles, two at a time
        for (int j = 0; j < kPatch; j += 2)
          hn::LoadInterleaved2(d, in + j, columns[j], columns[j + 1]);
        inputTransform<kKernel>(columns, h[row]);
      }
      float* dst = out + tr * p.tilesW + t0;
      for (int j = 0; j < kPatch; ++j) {
        V column[kPatch], v[kPatch];
        for (int i = 0; i < kPatch; ++i) column[i] = h[i][j];
        inputTransform<kKernel>(column, v);
        for (int i = 0; i < kPatch; ++i)
          hn::StoreU(v[i], d, dst + (i * kPatch + j) * positionStride);
      }
    }
}

// The same with flat tiles, in two steps. First Bᵀ along each padded row y = 2 r + parity: the
// transform of the patch columns of every tile of the row, into plane (patch column j, parity) of
// `rows`, at row r. A patch's row 2 q + parity of the tile in tile row tr is then padded row
// 2 (tr + q) + parity: it sits q rows into that plane from the tile's own index. So the second
// step, Bᵀ down the patch's rows, reads whole vectors of consecutive tiles across tile rows,
// however narrow the rows. Vectors may run past a row's tiles (the next row's stores overwrite
// those lanes, and the plane has a vector's slack) and past the item's last tile (into the slack
// of tileStride).
template <int kKernel>
void transformInputChannelFlat(const float* padded, int64_t tileRows, const Plan& p, float* rows,
                               float* out, int64_t positionStride) {
  constexpr int kPatch = kKernel + 1;
  const D d;
  const int64_t plane = p.rowTransformPlane();
  for (int64_t y = 0; y < 2 * tileRows + kKernel - 1; ++y) {
    float* dst = rows + (y % 2) * plane + (y / 2) * p.tilesW;
    for (int64_t t0 = 0; t0 < p.tilesW; t0 += kLanes) {
      const float* in = padded + y * p.paddedW + 2 * t0;
      V columns[kPatch], h[kPatch];  // the patch columns of kLanes tiles, loaded two at a time
      for (int j = 0; j < kPatch; j += 2)
        hn::LoadInterleaved2(d, in + j, columns[j], columns[j + 1]);
      inputTransform<kKernel>(columns, h);
      for (int j = 0; j < kPatch; ++j) hn::StoreU(h[j], d, dst + j * 2 * plane + t0);
    }
  }
  for (int64_t t = 0; t < tileRows * p.tilesW; t += kLanes)
    for (int j = 0; j < kPatch; ++j) {
      V column[kPatch], v[kPatch];
      for (int row = 0; row < kPatch; ++row)
        column[row] = hn::LoadU(d, rows + (j * 2 + row % 2) * plane + row / 2 * p.tilesW + t);
      inputTransform<kKernel>(column, v);
      for (int i = 0; i < kPatch; ++i)
        hn::StoreU(v[i], d, out + (i * kPatch + j) * positionStride + t);
    }
}

// Rows [first, last) of a plane `width` floats wide, from row firstRow on, into padded rows at
// column `column`: whole vectors, the last one loaded under a mask and stored whole (its zeros land
// in the padding, which has room). Nothing else is written: the rest stays as its caller zeroed it.
void padChannel(const float* plane, int64_t width, int64_t firstRow, int64_t first, int64_t last,
                int64_t column, const Plan& p, float* padded) {
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
    if (c + 1 < channels)
      padChannel(image + (c + 1) * height * width, width, firstRow, first, last, column, p,
                 padded + ((c + 1) % 2) * slot);
    transform(c, padded + (c % 2) * slot);
  }
}

// The tiles of an image's tile rows [firstTileRow, + tileRows), from tile `first` of the item on.
template <int kKernel>
void transformInput(const float* image, int64_t firstTileRow, int64_t tileRows, const Plan& p,
                    const ItemScratch& s, int64_t first = 0) {
  // The planes' slack reaches the last vector's lanes past the item's tiles: zeros there keep
  // whatever the scratch held before (NaN, say) out of the products.
  std::fill(s.rowTransforms, s.rowTransforms + p.rowTransformFloats(), 0.0f);
  padChannels(image, p.inChannels, p.inH, p.inW, 2 * firstTileRow - p.padTop,
              2 * tileRows + kKernel - 1, p.padLeft, p, s.padded,
              [&](int64_t c, const float* padded) {
                float* out = s.transformed + c * p.tileStride + first;
                const int64_t positionStride = p.inChannels * p.tileStride;
                if constexpr (flatTiles(kKernel))
                  transformInputChannelFlat<kKernel>(padded, tileRows, p, s.rowTransforms, out,
                                                     positionStride);
                else
                  transformInputChannelByRows<kKernel>(padded, tileRows, p, out, positionStride);
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

void multiply(const float* weights, int64_t tiles, const Plan& p, const ItemScratch& s) {
  const int64_t vectors = (tiles + kLanes - 1) / kLanes;
  for (int64_t position = 0; position < p.positions(); ++position) {
    const float* u = weights + position * p.inChannels * p.outChannels;
    const float* v = s.transformed + position * p.inChannels * p.tileStride;
    float* m = s.products + position * p.outChannels * p.tileStride;
    // Blocks of tile vectors as even as can be (7 vectors: 3 + 2 + 2).
    const int64_t blocks = (vectors + kMaxTileVectors - 1) / kMaxTileVectors;
    for (int64_t i = 0, t = 0; i < blocks; ++i) {
      const int64_t block = vectors / blocks + (i < vectors % blocks ? 1 : 0);
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

// n outputs of a row from two interleaved vectors (even and odd columns), n <= 2 kLanes.
HWY_INLINE void storeRowPairs(V even, V odd, float* dst, int64_t n) {
  const D d;
  if (n == 2 * kLanes) {
    hn::StoreInterleaved2(even, odd, d, dst);
    return;
  }
  HWY_ALIGN float row[2 * kMaxLanes];
  hn::StoreInterleaved2(even, odd, d, row);
  int64_t i = 0;
  if (n >= kLanes) {
    hn::StoreU(hn::Load(d, row), d, dst);
    i = kLanes;
  }
  const auto rest = hn::FirstN(d, static_cast<size_t>(n - i));
  hn::BlendedStore(hn::Load(d, row + i), rest, d, dst + i);
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

// n consecutive floats from src to dst: whole vectors, the rest under a mask.
HWY_INLINE void storeRun(const float* src, float* dst, int64_t n) {
  const D d;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) hn::StoreU(hn::LoadU(d, src + i), d, dst + i);
  if (i < n)
    hn::BlendedStore(hn::LoadU(d, src + i), hn::FirstN(d, static_cast<size_t>(n - i)), d, dst + i);
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

ItemScratch itemScratch(const Plan& p, float* scratch) {
  float* rowTransforms = scratch + 2 * p.paddedRows() * p.paddedW;
  float* transformed = rowTransforms + p.rowTransformFloats();
  return {scratch, rowTransforms, transformed, transformed + p.transformedFloats()};
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

// --- Weight gradient: dU = Σ over tiles of dM ⊙ V per position, dM = A dY Aᵀ the transformed
// output gradient of each tile, then dW = Gᵀ dU G (in HWY_ONCE below). With tiles in the lanes
// (3x3) or with output channels in the lanes (5x5, flat tiles; WinogradPlan.h says why).

// A (a, b): the 1-D expansion of two outputs' gradients to the patch's kKernel + 1 positions.
// F(2, 3): a, a + b, a - b, -b; F(2, 5): a, a + b, a - b, a + 2b, a - 2b, b.
template <int kKernel>
HWY_INLINE void gradientExpansion(V a, V b, V (&out)[kKernel + 1]) {
  out[0] = a;
  out[1] = hn::Add(a, b);
  out[2] = hn::Sub(a, b);
  if constexpr (kKernel == 3) {
    out[3] = hn::Neg(b);
  } else {
    const V two = hn::Set(D(), 2.0f);
    out[3] = hn::MulAdd(two, b, a);
    out[4] = hn::NegMulAdd(two, b, a);
    out[5] = b;
  }
}

// --- Weight gradient with tiles in the lanes (3x3): dU[position][o][c] = Σ over tiles of
// dM[position][o][t] · V[position][c][t], each sum a vector over tiles reduced at the item's end.

// One output channel's tiles of dy: dM = A dY Aᵀ (2x2 to the patch's size), from its padded rows
// (two per tile row, zeros past the output), into out[position * positionStride + tile] as the
// input's tiles.
template <int kKernel>
void transformGradientChannel(const float* padded, int64_t tileRows, const Plan& p, float* out,
                              int64_t positionStride) {
  constexpr int kPatch = kKernel + 1;
  const D d;
  for (int64_t tr = 0; tr < tileRows; ++tr)
    for (int64_t t0 = 0; t0 < p.tilesW; t0 += kLanes) {
      V h[2][kPatch];
      for (int row = 0; row < 2; ++row) {
        V even, odd;
        hn::LoadInterleaved2(d, padded + (2 * tr + row) * p.paddedW + 2 * t0, even, odd);
        gradientExpansion<kKernel>(even, odd, h[row]);
      }
      float* dst = out + tr * p.tilesW + t0;
      for (int j = 0; j < kPatch; ++j) {
        V v[kPatch];
        gradientExpansion<kKernel>(h[0][j], h[1][j], v);
        for (int i = 0; i < kPatch; ++i)
          hn::StoreU(v[i], d, dst + (i * kPatch + j) * positionStride);
      }
    }
}

// Output channels x input channels of sums of one position, each a vector over the tiles reduced
// at the end: at AVX-512 4 x 5 (20 sums, 9 loads a step), at AVX2 3 x 3 (9 sums, 6 loads).
#if HWY_TARGET == HWY_AVX3
constexpr int kTileLaneGradientOuts = 4, kTileLaneGradientIns = 5;
#else
constexpr int kTileLaneGradientOuts = 3, kTileLaneGradientIns = 3;
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
template <int kKernel>
void gradientItemTileLanes(const float* x, const float* dy, int64_t images, int64_t firstTileRow,
                           const Plan& p, float* scratch, float* du, float* dbias) {
  const D d;
  const ItemScratch s = itemScratch(p, scratch);
  const int64_t tileRows = std::min(p.tileRowsPerItem, p.tilesH - firstTileRow);
  const int64_t imageTiles = tileRows * p.tilesW;
  const int64_t vectors = (images * imageTiles + kLanes - 1) / kLanes;
  const int64_t positionStride = p.outChannels * p.tileStride;
  for (int64_t n = 0; n < images; ++n) {
    transformInput<kKernel>(x + n * p.inChannels * p.inH * p.inW, firstTileRow, tileRows, p, s,
                            n * imageTiles);
    padChannels(dy + n * p.outChannels * p.outH * p.outW, p.outChannels, p.outH, p.outW,
                2 * firstTileRow, 2 * tileRows, 0, p, s.padded, [&](int64_t o, const float* rows) {
                  transformGradientChannel<kKernel>(rows, tileRows, p,
                                                    s.products + o * p.tileStride + n * imageTiles,
                                                    positionStride);
                });
  }
  // The last vector's lanes past the item's tiles hold what the scratch held before (an earlier
  // item's tiles, or anything, NaN included): zero them in dM and in V, so that they add nothing.
  const int64_t tiles = images * imageTiles;
  for (int64_t row = 0; row < p.positions() * p.outChannels; ++row)
    std::fill(s.products + row * p.tileStride + tiles,
              s.products + row * p.tileStride + vectors * kLanes, 0.0f);
  for (int64_t row = 0; row < p.positions() * p.inChannels; ++row)
    std::fill(s.transformed + row * p.tileStride + tiles,
              s.transformed + row * p.tileStride + vectors * kLanes, 0.0f);
  for (int64_t position = 0; position < p.positions(); ++position) {
    const float* dm = s.products + position * positionStride;
    const float* v = s.transformed + position * p.inChannels * p.tileStride;
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
  const float* sums = s.products + (kKernel + 2) * positionStride;  // position (1, 1)
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
  constexpr int kPatch = kKernel + 1;
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
        float* dst = out + (tr * p.tilesW + tc) * channels + o;
        for (int j = 0; j < kPatch; ++j) {
          V v[kPatch];
          gradientExpansion<kKernel>(h[0][j], h[1][j], v);
          for (int i = 0; i < kPatch; ++i)
            hn::StoreU(v[i], d, dst + (i * kPatch + j) * positionStride);
        }
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
  const int64_t blocks =
      (vectors + kChannelLaneGradientOutVectors - 1) / kChannelLaneGradientOutVectors;
  for (int64_t position = 0; position < p.positions(); ++position) {
    const float* dm = s.products + position * positionStride;
    const float* v = s.transformed + position * p.inChannels * p.tileStride;
    float* part = du + position * p.inChannels * channels;
    // Blocks of output vectors as even as can be (7 vectors: 3 + 2 + 2).
    for (int64_t i = 0, o = 0; i < blocks; ++i) {
      const int64_t block = vectors / blocks + (i < vectors % blocks ? 1 : 0);
      for (int64_t c = 0; c < p.inChannels; c += kChannelLaneGradientIns) {
        const int64_t ins = std::min<int64_t>(kChannelLaneGradientIns, p.inChannels - c);
        kChannelLaneGradientKernels[static_cast<size_t>(ins - 1)][static_cast<size_t>(block - 1)](
            v + c * p.tileStride, p.tileStride, dm + o * kLanes, channels, tiles,
            part + c * channels + o * kLanes, channels);
      }
      o += block;
    }
  }
  const float* sums = s.products + (kKernel + 2) * positionStride;  // position (1, 1)
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
  if constexpr (flatTiles(kKernel))
    gradientItemChannelLanes<kKernel>(x, dy, images, firstTileRow, p, scratch, du, dbias);
  else
    gradientItemTileLanes<kKernel>(x, dy, images, firstTileRow, p, scratch, du, dbias);
}

// --- Backward data with flat tiles (5x5): the forward pass's adjoint. dM = A dY Aᵀ of each tile
// of dy, dV[position][c][t] = Σ_o U[position][c][o] · dM[position][o][t] (the forward pass's
// weights, transposed), then each tile's input gradient B dV Bᵀ, a patch added into dx where the
// tile's input patch lies. It has the forward pass's tiles and products (16 tiles for LeNet's 8x8
// dy) where backward data as a forward pass over dy padded by kernel - 1 has a tile per 2x2 of dx
// (36).

// Bᵀ transposed, applied to kKernel + 1 values: out[row] = Σ_i Bᵀ[i][row] v[i]. F(2, 3): v0 - 0,
// v1 - v2 + v3, v1 + v2 - v0, -v3. F(2, 5): 4 v0, 4 (v2 - v1) + 2 (v4 - v3) + 4 v5,
// -5 v0 - 4 (v1 + v2) - (v3 + v4), (v1 - v2) + 2 (v3 - v4) - 5 v5, v0 + v1 + v2 + v3 + v4, v5.
template <int kKernel>
HWY_INLINE void inputTransformTransposed(const V (&v)[kKernel + 1], V (&out)[kKernel + 1]) {
  const D d;
  if constexpr (kKernel == 3) {
    out[0] = v[0];
    out[1] = hn::Add(hn::Sub(v[1], v[2]), v[3]);
    out[2] = hn::Sub(hn::Add(v[1], v[2]), v[0]);
    out[3] = hn::Neg(v[3]);
  } else {
    const V two = hn::Set(d, 2.0f), four = hn::Set(d, 4.0f), five = hn::Set(d, 5.0f);
    const V sum12 = hn::Add(v[1], v[2]), diff12 = hn::Sub(v[1], v[2]);
    const V sum34 = hn::Add(v[3], v[4]), diff34 = hn::Sub(v[3], v[4]);
    out[0] = hn::Mul(four, v[0]);
    out[1] = hn::MulAdd(four, v[5], hn::NegMulAdd(two, diff34, hn::Mul(four, hn::Neg(diff12))));
    out[2] = hn::Sub(hn::NegMulAdd(four, sum12, hn::Mul(hn::Neg(five), v[0])), sum34);
    out[3] = hn::NegMulAdd(five, v[5], hn::MulAdd(two, diff34, diff12));
    out[4] = hn::Add(hn::Add(v[0], sum12), sum34);
    out[5] = v[5];
  }
}

// One output channel's dy rows of an item (zero-padded), into dM = A dY Aᵀ at
// out[position * positionStride + tile], flat: A along each row first, into plane (patch column j,
// row parity) of `rows` at the tile's own index, then A down each tile's two rows, whole vectors
// of consecutive tiles.
template <int kKernel>
void transformGradientChannelFlat(const float* padded, int64_t tileRows, const Plan& p, float* rows,
                                  float* out, int64_t positionStride) {
  constexpr int kPatch = kKernel + 1;
  const D d;
  const int64_t plane = p.rowTransformPlane();
  for (int64_t y = 0; y < 2 * tileRows; ++y) {
    float* dst = rows + (y % 2) * plane + (y / 2) * p.tilesW;
    for (int64_t t0 = 0; t0 < p.tilesW; t0 += kLanes) {
      V even, odd, h[kPatch];
      hn::LoadInterleaved2(d, padded + y * p.paddedW + 2 * t0, even, odd);
      gradientExpansion<kKernel>(even, odd, h);
      for (int j = 0; j < kPatch; ++j) hn::StoreU(h[j], d, dst + j * 2 * plane + t0);
    }
  }
  for (int64_t t = 0; t < tileRows * p.tilesW; t += kLanes)
    for (int j = 0; j < kPatch; ++j) {
      V v[kPatch];
      gradientExpansion<kKernel>(hn::LoadU(d, rows + j * 2 * plane + t),
                                 hn::LoadU(d, rows + (j * 2 + 1) * plane + t), v);
      for (int i = 0; i < kPatch; ++i)
        hn::StoreU(v[i], d, out + (i * kPatch + j) * positionStride + t);
    }
}

// One input channel's dV of the item (`dv`, [position][tile] at positionStride) into its padded
// gradient rows `acc` (row y holds the patch rows 2 tr + row = y of the tiles, column x the patch
// columns 2 tc + j = x). First B down each tile's patch rows: patch row `row` = 2 q + parity into
// `patchRows`[j][row][tile] (Plan's patchRowLead zeros before each row); then each plane (j,
// parity) of `rows` at padded row r sums the patch rows 2 q + parity of the tiles q rows up, whole
// vectors; then B along the padded rows, and each tile's kKernel + 1 values are added into acc.
template <int kKernel>
void transformInputGradientChannel(const float* dv, int64_t positionStride, int64_t tileRows,
                                   const Plan& p, float* patchRows, float* rows, float* acc) {
  constexpr int kPatch = kKernel + 1;
  const D d;
  const int64_t lead = p.patchRowLead(), patchRowStride = p.patchRowStride();
  const int64_t tiles = tileRows * p.tilesW, plane = p.rowTransformPlane();
  for (int64_t t = 0; t < tiles; t += kLanes)
    for (int j = 0; j < kPatch; ++j) {
      V v[kPatch], column[kPatch];
      for (int i = 0; i < kPatch; ++i)
        v[i] = hn::LoadU(d, dv + (i * kPatch + j) * positionStride + t);
      inputTransformTransposed<kKernel>(v, column);
      for (int row = 0; row < kPatch; ++row)
        hn::StoreU(column[row], d, patchRows + (j * kPatch + row) * patchRowStride + lead + t);
    }
  const int64_t planeRows = tileRows + kKernel / 2;
  for (int j = 0; j < kPatch; ++j)
    for (int parity = 0; parity < 2; ++parity)
      for (int64_t u = 0; u < planeRows * p.tilesW; u += kLanes) {
        V sum = hn::Zero(d);
        for (int q = 0; 2 * q + parity < kPatch; ++q)
          sum =
              hn::Add(sum, hn::LoadU(d, patchRows + (j * kPatch + 2 * q + parity) * patchRowStride +
                                            lead + u - q * p.tilesW));
        hn::StoreU(sum, d, rows + (j * 2 + parity) * plane + u);
      }
  HWY_ALIGN float values[kPatch][kMaxLanes];
  for (int64_t y = 0; y < 2 * tileRows + kKernel - 1; ++y) {
    const float* src = rows + (y % 2) * plane + (y / 2) * p.tilesW;
    float* row = acc + y * p.paddedW;
    for (int64_t t0 = 0; t0 < p.tilesW; t0 += kLanes) {
      V r[kPatch], out[kPatch];
      for (int j = 0; j < kPatch; ++j) r[j] = hn::LoadU(d, src + j * 2 * plane + t0);
      inputTransformTransposed<kKernel>(r, out);
      for (int j = 0; j < kPatch; ++j) hn::Store(out[j], d, values[j]);
      const int64_t n = std::min<int64_t>(kLanes, p.tilesW - t0);
      for (int64_t tc = 0; tc < n; ++tc)
        for (int j = 0; j < kPatch; ++j) row[2 * (t0 + tc) + j] += values[j][tc];
    }
  }
}

// One item of backward data with flat tiles: dy's tile rows [firstTileRow, + tileRows) of one
// image, their input gradient added into the image's dx (`dxImage`, which the caller zeroed).
template <int kKernel>
void backwardDataItem(const float* dyImage, const float* weights, float* dxImage,
                      int64_t firstTileRow, const Plan& p, float* scratch) {
  const D d;
  const ItemScratch s = itemScratch(p, scratch);
  const int64_t tileRows = std::min(p.tileRowsPerItem, p.tilesH - firstTileRow);
  const int64_t tiles = tileRows * p.tilesW;
  // dy (p's inputs: O channels of inH x inW) to dM, in s.transformed; the planes' slack read past
  // the last tile must hold zeros, so that the lanes past the tiles stay zero through dV.
  std::fill(s.rowTransforms, s.rowTransforms + p.rowTransformFloats(), 0.0f);
  padChannels(dyImage, p.inChannels, p.inH, p.inW, 2 * firstTileRow, 2 * tileRows, 0, p, s.padded,
              [&](int64_t o, const float* padded) {
                transformGradientChannelFlat<kKernel>(padded, tileRows, p, s.rowTransforms,
                                                      s.transformed + o * p.tileStride,
                                                      p.inChannels * p.tileStride);
              });
  multiply(weights, tiles, p, s);  // dV, in s.products
  // Per input channel, B dV Bᵀ added into a zeroed padded plane, then into dx.
  float* patchRows = scratch + p.threadFloats();
  std::fill(patchRows, patchRows + p.positions() * p.patchRowStride(), 0.0f);
  float* acc = s.padded;
  const int64_t accRows = 2 * tileRows + kKernel - 1;
  const int64_t firstRow = 2 * firstTileRow - p.padTop;
  for (int64_t c = 0; c < p.outChannels; ++c) {
    for (int64_t i = 0; i < accRows * p.paddedW; i += kLanes) hn::StoreU(hn::Zero(d), d, acc + i);
    transformInputGradientChannel<kKernel>(s.products + c * p.tileStride,
                                           p.outChannels * p.tileStride, tileRows, p, patchRows,
                                           s.rowTransforms, acc);
    float* plane = dxImage + c * p.outH * p.outW;
    for (int64_t y = std::max<int64_t>(0, -firstRow); y < accRows && firstRow + y < p.outH; ++y) {
      const float* src = acc + y * p.paddedW + p.padLeft;
      float* dst = plane + (firstRow + y) * p.outW;
      for (int64_t x = 0; x < p.outW; ++x) dst[x] += src[x];
    }
  }
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

Plan planFor(int64_t kernel, const Shape& in, int64_t outChannels, int64_t outH, int64_t outW,
             int64_t padTop, int64_t padLeft, int64_t targetTiles = kTargetTilesPerItem,
             bool wholeImages = false) {
  Plan p{};
  p.kernel = kernel;
  p.images = in[0];
  p.inChannels = in[1];
  p.inH = in[2];
  p.inW = in[3];
  p.outChannels = outChannels;
  p.outH = outH;
  p.outW = outW;
  p.padTop = padTop;
  p.padLeft = padLeft;
  p.tilesH = (outH + 1) / 2;
  p.tilesW = (outW + 1) / 2;
  p.tileRowsPerItem = std::clamp<int64_t>(targetTiles / std::max<int64_t>(p.tilesW, 1), 1,
                                          std::max<int64_t>(p.tilesH, 1));
  p.itemsPerImage = (p.tilesH + p.tileRowsPerItem - 1) / p.tileRowsPerItem;
  p.imagesPerItem = 1;
  if (wholeImages && p.itemsPerImage == 1)
    p.imagesPerItem = std::clamp<int64_t>(targetTiles / std::max<int64_t>(p.tilesH * p.tilesW, 1),
                                          1, std::max<int64_t>(p.images, 1));
  p.tileStride = roundUp(p.imagesPerItem * p.tileRowsPerItem * p.tilesW, kMaxLanes) + kMaxLanes;
  // Interleaved loads of a row's last vector read 2 kMaxLanes + kernel - 1 floats from its first
  // column (in whole vectors, so that rows are zeroed a vector at a time).
  p.paddedW = roundUp(std::max(2 * roundUp(p.tilesW, kMaxLanes) + kernel - 1,
                               p.padLeft + roundUp(p.inW, kMaxLanes)),
                      kMaxLanes);
  return p;
}

Plan forwardPlan(const Shape& x, const Shape& w, const WindowGeometry& g) {
  return planFor(g.kernelH, x, w[0], g.outH(x[2]), g.outW(x[3]), g.padTop, g.padLeft);
}

// Backward data as a forward pass over dy: O input channels, C outputs, padding kernel - 1 - p.
Plan backwardDataPlan(const Shape& dx, const Shape& w, const WindowGeometry& g) {
  const Shape dy{dx[0], w[0], g.outH(dx[2]), g.outW(dx[3])};
  return planFor(g.kernelH, dy, w[1], dx[2], dx[3], g.kernelH - 1 - g.padTop,
                 g.kernelW - 1 - g.padLeft);
}

// The weight gradient's items: several whole images where they are small. With tiles in the lanes
// they are larger: each ends in reductions of vectors of sums, one per (position, output, input
// channel), whatever its tile count.
Plan gradientPlan(const Shape& x, const Shape& dw, const WindowGeometry& g) {
  return planFor(
      g.kernelH, x, dw[0], g.outH(x[2]), g.outW(x[3]), g.padTop, g.padLeft,
      flatTiles(g.kernelH) ? kTargetFlatGradientTilesPerItem : kTargetGradientTilesPerItem, true);
}

// Per thread: the item scratch, then its part of dU and of the bias gradient.
int64_t gradientThreadFloats(const Plan& p) {
  return p.gradientThreadFloats() + p.gradientPartFloats();
}

// G, the weight transform (kernel + 1 rows of `kernel`): U = G g Gᵀ, and the weight gradient
// dW = Gᵀ dU G. F(2x2, 3x3), and F(2x2, 5x5) on the points 0, 1, -1, 2, -2 and ∞ (row i of a
// finite point q: q^j / Π over the other points (q - point)).
constexpr float kG3[4][3] = {{1, 0, 0}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0, 0, 1}};
constexpr float kG5[6][5] = {{1.0f / 4, 0, 0, 0, 0},
                             {-1.0f / 6, -1.0f / 6, -1.0f / 6, -1.0f / 6, -1.0f / 6},
                             {-1.0f / 6, 1.0f / 6, -1.0f / 6, 1.0f / 6, -1.0f / 6},
                             {1.0f / 24, 2.0f / 24, 4.0f / 24, 8.0f / 24, 16.0f / 24},
                             {1.0f / 24, -2.0f / 24, 4.0f / 24, -8.0f / 24, 16.0f / 24},
                             {0, 0, 0, 0, 1}};

// G of a kernel size, as a compile-time table: the transforms below are templates on the size, so
// that their small loops unroll (with the size a run-time value they took 4-6% of a pass).
template <int K>
constexpr const float (&weightTransform())[K + 1][K] {
  if constexpr (K == 3)
    return kG3;
  else
    return kG5;
}

// dW = Gᵀ dU G of every weight plane, from the threads' summed part of dU (Plan's
// gradientPartFloats: [position][in][padded out] with flat tiles, else [position][out][in]).
template <int K>
void weightsFromTransformedOf(const float* du, const Plan& p, Tensor& dw) {
  constexpr int64_t k = K, patch = K + 1;
  constexpr const float(&G)[K + 1][K] = weightTransform<K>();
  const int64_t outs = dw.dim(0), ins = dw.dim(1);
  const bool flat = flatTiles(k);
  const int64_t positionStride = flat ? ins * p.paddedOutChannels() : outs * ins;
  const int64_t outStride = flat ? 1 : ins, inStride = flat ? p.paddedOutChannels() : 1;
  float* grad = dw.data();
  for (int64_t o = 0; o < outs; ++o)
    for (int64_t c = 0; c < ins; ++c) {
      float ug[6][5] = {};  // dU G
      for (int64_t a = 0; a < patch; ++a)
        for (int64_t b = 0; b < patch; ++b) {
          const float u = du[(a * patch + b) * positionStride + o * outStride + c * inStride];
          for (int64_t j = 0; j < k; ++j) ug[a][j] += u * G[b][j];
        }
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < k; ++j) {
          float sum = 0.0f;
          for (int64_t a = 0; a < patch; ++a) sum += G[a][i] * ug[a][j];
          grad[((o * ins + c) * k + i) * k + j] = sum;
        }
    }
}

// The weights a pass multiplies by: the forward pass's, the forward pass over dy's (backward data
// with tiles of dx: w turned by 180 degrees, input and output channels swapped), or the forward
// pass's transposed (its adjoint: backward data with the forward pass's tiles).
enum class WeightsFor { Forward, ForwardOverGradient, Adjoint };

// U = G g Gᵀ of every weight plane, into u[position][in][out]: g = w[out][in] (Forward), or
// w[in][out] turned by 180 degrees (ForwardOverGradient) or not (Adjoint).
template <int K>
void transformWeightsOf(const Tensor& w, WeightsFor pass, float* u) {
  constexpr int64_t k = K, patch = K + 1;
  constexpr const float(&G)[K + 1][K] = weightTransform<K>();
  const bool swapped = pass != WeightsFor::Forward;
  const bool turned = pass == WeightsFor::ForwardOverGradient;
  const int64_t outs = swapped ? w.dim(1) : w.dim(0);
  const int64_t ins = swapped ? w.dim(0) : w.dim(1);
  const float* weights = w.data();
  for (int64_t o = 0; o < outs; ++o)
    for (int64_t c = 0; c < ins; ++c) {
      const float* plane = weights + (swapped ? c * outs + o : o * ins + c) * k * k;
      const auto g = [&](int64_t i, int64_t j) {
        return turned ? plane[(k - 1 - i) * k + (k - 1 - j)] : plane[i * k + j];
      };
      float gg[6][5] = {};  // G g
      for (int64_t a = 0; a < patch; ++a)
        for (int64_t j = 0; j < k; ++j)
          for (int64_t i = 0; i < k; ++i) gg[a][j] += G[a][i] * g(i, j);
      for (int64_t a = 0; a < patch; ++a)
        for (int64_t b = 0; b < patch; ++b) {
          float sum = 0.0f;
          for (int64_t j = 0; j < k; ++j) sum += gg[a][j] * G[b][j];
          u[((a * patch + b) * ins + c) * outs + o] = sum;
        }
    }
}

#ifdef DL4CPP_X86_KERNELS
using ItemKernel = void (*)(const float*, const float*, const float*, float*, int64_t, const Plan&,
                            float*);
ItemKernel itemKernel(const Plan& p) {
  return p.kernel == 3 ? highwayKernel(&N_AVX3::runItem<3>, &N_AVX2::runItem<3>)
                       : highwayKernel(&N_AVX3::runItem<5>, &N_AVX2::runItem<5>);
}
#endif

void run(const Plan& p, const float* in, const float* bias, float* out, float* scratch) {
#ifdef DL4CPP_X86_KERNELS
  const ItemKernel item = itemKernel(p);
  const float* weights = scratch;
  float* threadScratch = scratch + p.weightFloats();
  const int64_t inImage = p.inChannels * p.inH * p.inW, outImage = p.outChannels * p.outH * p.outW;
  parallelForOnThreads(p.images * p.itemsPerImage, [&](int64_t i, int thread) {
    const int64_t n = i / p.itemsPerImage, firstTileRow = i % p.itemsPerImage * p.tileRowsPerItem;
    item(in + n * inImage, weights, bias, out + n * outImage, firstTileRow, p,
         threadScratch + thread * p.threadFloats());
  });
#else
  (void)p, (void)in, (void)bias, (void)out, (void)scratch;
#endif
}

void weightsFromTransformed(const float* du, const Plan& p, Tensor& dw) {
  if (dw.dim(2) == 3)
    weightsFromTransformedOf<3>(du, p, dw);
  else
    weightsFromTransformedOf<5>(du, p, dw);
}

void transformWeights(const Tensor& w, WeightsFor pass, float* u) {
  if (w.dim(2) == 3)
    transformWeightsOf<3>(w, pass, u);
  else
    transformWeightsOf<5>(w, pass, u);
}

// Backward data with flat tiles: the forward pass's tiles, its input and output channels and
// extents swapped (dy is the input, dx the output).
Plan adjointPlan(const Shape& dx, const Shape& w, const WindowGeometry& g) {
  Plan p = forwardPlan(dx, w, g);
  std::swap(p.inChannels, p.outChannels);
  std::swap(p.inH, p.outH);
  std::swap(p.inW, p.outW);
  return p;
}

// Images in parallel; an image's items one after the other, since their patches overlap in dx.
void runAdjoint(const Plan& p, const Tensor& dy, const Tensor& w, Tensor& dx, float* scratch) {
#ifdef DL4CPP_X86_KERNELS
  transformWeights(w, WeightsFor::Adjoint, scratch);
  const auto item = p.kernel == 3
                        ? highwayKernel(&N_AVX3::backwardDataItem<3>, &N_AVX2::backwardDataItem<3>)
                        : highwayKernel(&N_AVX3::backwardDataItem<5>, &N_AVX2::backwardDataItem<5>);
  const int64_t dyImage = p.inChannels * p.inH * p.inW, dxImage = p.outChannels * p.outH * p.outW;
  parallelForOnThreads(p.images, [&](int64_t n, int thread) {
    float* image = dx.data() + n * dxImage;
    std::fill(image, image + dxImage, 0.0f);
    for (int64_t row = 0; row < p.tilesH; row += p.tileRowsPerItem)
      item(dy.data() + n * dyImage, scratch, image, row, p,
           scratch + p.weightFloats() + thread * p.adjointThreadFloats());
  });
#else
  (void)p, (void)dy, (void)w, (void)dx, (void)scratch;
#endif
}

void checkSupported(const WindowGeometry& g, const Shape& w, const char* pass) {
  if (!winogradConvolutionSupported(g) || w.rank() != 4 || w[2] != g.kernelH || w[3] != g.kernelW)
    throw BackendError(std::string("Winograd convolution ") + pass +
                       ": needs AVX2 or AVX-512 and a 3x3 or 5x5 kernel at stride 1 without "
                       "dilation, each padding below the kernel size");
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
                                const WindowGeometry& g, float* scratch) {
  winograd::checkSupported(g, w.shape(), "forward");
  const winograd::Plan p = winograd::forwardPlan(x.shape(), w.shape(), g);
  winograd::transformWeights(w, winograd::WeightsFor::Forward, scratch);
  winograd::run(p, x.data(), b.empty() ? nullptr : b.data(), y.data(), scratch);
}

int64_t winogradBackwardWeightsScratchFloats(const Shape& x, const Shape& dw,
                                             const WindowGeometry& g, int threads) {
  return threads * winograd::gradientThreadFloats(winograd::gradientPlan(x, dw, g));
}

void winogradConvolutionBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                                        const WindowGeometry& g, float* scratch) {
  winograd::checkSupported(g, dw.shape(), "backward weights");
#ifdef DL4CPP_X86_KERNELS
  const winograd::Plan p = winograd::gradientPlan(x.shape(), dw.shape(), g);
  const int threads = singleThreaded() ? 1 : omp_get_max_threads();
  const int64_t perThread = winograd::gradientThreadFloats(p);
  const auto partsOf = [&](int thread) {
    return scratch + thread * perThread + p.gradientThreadFloats();
  };
  const int64_t partFloats = p.gradientPartFloats();
  const int64_t biasOffset = partFloats - p.paddedOutChannels();
  for (int t = 0; t < threads; ++t) std::fill(partsOf(t), partsOf(t) + partFloats, 0.0f);
  const auto item = p.kernel == 3
                        ? highwayKernel(&N_AVX3::gradientItem<3>, &N_AVX2::gradientItem<3>)
                        : highwayKernel(&N_AVX3::gradientItem<5>, &N_AVX2::gradientItem<5>);
  const int64_t inImage = p.inChannels * p.inH * p.inW, outImage = p.outChannels * p.outH * p.outW;
  const int64_t imageGroups = (p.images + p.imagesPerItem - 1) / p.imagesPerItem;
  parallelForOnThreads(imageGroups * p.itemsPerImage, [&](int64_t i, int thread) {
    const int64_t n = i / p.itemsPerImage * p.imagesPerItem;
    const int64_t firstTileRow = i % p.itemsPerImage * p.tileRowsPerItem;
    float* parts = partsOf(thread);
    item(x.data() + n * inImage, dy.data() + n * outImage, std::min(p.imagesPerItem, p.images - n),
         firstTileRow, p, scratch + thread * perThread, parts, parts + biasOffset);
  });
  // The threads' parts, added in thread order into thread 0's.
  float* total = partsOf(0);
  for (int t = 1; t < threads; ++t) {
    const float* part = partsOf(t);
    for (int64_t i = 0; i < partFloats; ++i) total[i] += part[i];
  }
  winograd::weightsFromTransformed(total, p, dw);
  if (!db.empty()) std::copy(total + biasOffset, total + biasOffset + p.outChannels, db.data());
#else
  (void)x, (void)dy, (void)dw, (void)db, (void)scratch;
#endif
}

int64_t winogradConvolutionMaxPoolingForwardScratchFloats(const Shape& x, const Shape& w,
                                                          const WindowGeometry& g, int threads) {
  const winograd::Plan p = winograd::forwardPlan(x, w, g);
  return p.weightFloats() + threads * (p.threadFloats() + p.outChannels * p.outH * p.outW);
}

void winogradConvolutionMaxPoolingForward(const Tensor& x, const Tensor& w, const Tensor& b,
                                          Tensor& pooled, const WindowGeometry& g,
                                          const WindowGeometry& poolG, uint8_t* argmax,
                                          float* scratch) {
  winograd::checkSupported(g, w.shape(), "forward with max pooling");
#ifdef DL4CPP_X86_KERNELS
  const winograd::Plan p = winograd::forwardPlan(x.shape(), w.shape(), g);
  winograd::transformWeights(w, winograd::WeightsFor::Forward, scratch);
  const winograd::ItemKernel item = winograd::itemKernel(p);
  const float* bias = b.empty() ? nullptr : b.data();
  const PlaneExtents e{p.outH, p.outW, pooled.dim(2), pooled.dim(3)};
  const int64_t inImage = p.inChannels * p.inH * p.inW,
                pooledImage = p.outChannels * e.outH * e.outW;
  const int64_t perThread = p.threadFloats() + p.outChannels * p.outH * p.outW;
  parallelForOnThreads(p.images, [&](int64_t n, int thread) {
    float* itemScratch = scratch + p.weightFloats() + thread * perThread;
    float* convolved = itemScratch + p.threadFloats();
    for (int64_t row = 0; row < p.tilesH; row += p.tileRowsPerItem)
      item(x.data() + n * inImage, scratch, bias, convolved, row, p, itemScratch);
    maxPoolingForwardPlanes(convolved, pooled.data() + n * pooledImage,
                            argmax ? argmax + n * pooledImage : nullptr, p.outChannels, e, poolG);
  });
#else
  (void)x, (void)b, (void)pooled, (void)poolG, (void)argmax;
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
  winograd::run(p, dy.data(), nullptr, dx.data(), scratch);
}

}  // namespace dl4cpp::cpu
#endif  // HWY_ONCE
