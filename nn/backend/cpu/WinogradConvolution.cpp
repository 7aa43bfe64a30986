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

// The 1-D input transform Bᵀ d of 4 values: d0 - d2, d1 + d2, d2 - d1, d1 - d3.
HWY_INLINE void transform4(V d0, V d1, V d2, V d3, V (&out)[4]) {
  out[0] = hn::Sub(d0, d2);
  out[1] = hn::Add(d1, d2);
  out[2] = hn::Sub(d2, d1);
  out[3] = hn::Sub(d1, d3);
}

// One input channel of an item: every tile's V = Bᵀ d B, from the zero-padded rows of the
// channel, into out[position * positionStride + tile] (tile = row · tilesW + column).
// A row's last vector may run past tilesW: the next row's vectors, stored after it, overwrite
// those lanes, and the item's last row runs into the slack of tileStride.
void transformInputChannel(const float* padded, int64_t tileRows, const Plan& p, float* out,
                           int64_t positionStride) {
  const D d;
  for (int64_t tr = 0; tr < tileRows; ++tr)
    for (int64_t t0 = 0; t0 < p.tilesW; t0 += kLanes) {
      V h[4][4];  // h[row][j]: the 1-D transform of patch row `row`
      for (int row = 0; row < 4; ++row) {
        const float* in = padded + (2 * tr + row) * p.paddedW + 2 * t0;
        V e0, o0, e1, o1;  // patch columns 0 and 1, then 2 and 3, of kLanes tiles
        hn::LoadInterleaved2(d, in, e0, o0);
        hn::LoadInterleaved2(d, in + 2, e1, o1);
        transform4(e0, o0, e1, o1, h[row]);
      }
      float* dst = out + tr * p.tilesW + t0;
      for (int j = 0; j < 4; ++j) {
        V v[4];
        transform4(h[0][j], h[1][j], h[2][j], h[3][j], v);
        for (int i = 0; i < 4; ++i) hn::StoreU(v[i], d, dst + (i * 4 + j) * positionStride);
      }
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
void transformInput(const float* image, int64_t firstTileRow, int64_t tileRows, const Plan& p,
                    const ItemScratch& s, int64_t first = 0) {
  padChannels(image, p.inChannels, p.inH, p.inW, 2 * firstTileRow - p.padTop, 2 * tileRows + 2,
              p.padLeft, p, s.padded, [&](int64_t c, const float* padded) {
                transformInputChannel(padded, tileRows, p, s.transformed + c * p.tileStride + first,
                                      p.inChannels * p.tileStride);
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
  for (int64_t position = 0; position < kPositions; ++position) {
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

// The 1-D output transform Aᵀ m of 4 values: m0 + m1 + m2, m1 - m2 - m3.
HWY_INLINE void inverse4(V m0, V m1, V m2, V m3, V& out0, V& out1) {
  out0 = hn::Add(hn::Add(m0, m1), m2);
  out1 = hn::Sub(hn::Sub(m1, m2), m3);
}

// Every output of the item's tiles: Aᵀ M A + bias, into the image's planes.
void transformOutput(const float* bias, int64_t firstTileRow, int64_t tileRows, const Plan& p,
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
        const float* m = products + tr * p.tilesW + t0;
        V columns[2][4];  // Aᵀ M: the two output rows' values at the 4 patch columns
        for (int j = 0; j < 4; ++j)
          inverse4(hn::LoadU(d, m + j * positionStride), hn::LoadU(d, m + (4 + j) * positionStride),
                   hn::LoadU(d, m + (8 + j) * positionStride),
                   hn::LoadU(d, m + (12 + j) * positionStride), columns[0][j], columns[1][j]);
        const int64_t n = std::min<int64_t>(2 * kLanes, p.outW - 2 * t0);
        for (int64_t r = 0; r < 2 && outRow + r < p.outH; ++r) {
          V even, odd;
          inverse4(columns[r][0], columns[r][1], columns[r][2], columns[r][3], even, odd);
          storeRowPairs(hn::Add(even, b), hn::Add(odd, b), plane + (outRow + r) * p.outW + 2 * t0,
                        n);
        }
      }
    }
  }
}

ItemScratch itemScratch(const Plan& p, float* scratch) {
  const int64_t padded = 2 * p.paddedRows() * p.paddedW;
  return {scratch, scratch + padded, scratch + padded + p.transformedFloats()};
}

void runItem(const float* in, const float* weights, const float* bias, float* out,
             int64_t firstTileRow, const Plan& p, float* scratch) {
  const ItemScratch s = itemScratch(p, scratch);
  const int64_t tileRows = std::min(p.tileRowsPerItem, p.tilesH - firstTileRow);
  transformInput(in, firstTileRow, tileRows, p, s);
  multiply(weights, tileRows * p.tilesW, p, s);
  transformOutput(bias, firstTileRow, tileRows, p, s, out);
}

// --- Weight gradient: dU[position][o][c] = Σ over tiles of dM[position][o][t] · V[position][c][t],
// dM = A dY Aᵀ the transformed output gradient of each tile, then dW = Gᵀ dU G (in HWY_ONCE below).

// One output channel's tiles of dy: dM = A dY Aᵀ (2x2 to 4x4), from its padded rows (two per tile
// row, zeros past the output), into out[position * positionStride + tile] as the input's tiles.
void transformGradientChannel(const float* padded, int64_t tileRows, const Plan& p, float* out,
                              int64_t positionStride) {
  const D d;
  const auto expand = [](V a, V b, V(&out)[4]) {  // A (a, b): a, a + b, a - b, -b
    out[0] = a;
    out[1] = hn::Add(a, b);
    out[2] = hn::Sub(a, b);
    out[3] = hn::Neg(b);
  };
  for (int64_t tr = 0; tr < tileRows; ++tr)
    for (int64_t t0 = 0; t0 < p.tilesW; t0 += kLanes) {
      V h[2][4];
      for (int row = 0; row < 2; ++row) {
        V even, odd;
        hn::LoadInterleaved2(d, padded + (2 * tr + row) * p.paddedW + 2 * t0, even, odd);
        expand(even, odd, h[row]);
      }
      float* dst = out + tr * p.tilesW + t0;
      for (int j = 0; j < 4; ++j) {
        V v[4];
        expand(h[0][j], h[1][j], v);
        for (int i = 0; i < 4; ++i) hn::StoreU(v[i], d, dst + (i * 4 + j) * positionStride);
      }
    }
}

// Output channels x input channels of sums of one position, each a vector over the tiles reduced
// at the end: at AVX-512 4 x 5 (20 sums, 9 loads a step), at AVX2 3 x 3 (9 sums, 6 loads).
#if HWY_TARGET == HWY_AVX3
constexpr int kGradientOuts = 4, kGradientIns = 5;
#else
constexpr int kGradientOuts = 3, kGradientIns = 3;
#endif

template <int kOut, int kIn>
void gradientBlock(const float* dm, const float* v, int64_t tileStride, int64_t vectors, float* du,
                   int64_t duRow) {
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

using GradientKernel = void (*)(const float*, const float*, int64_t, int64_t, float*, int64_t);
template <int kOut, int kIn>
struct GradientKernelFor {
  static constexpr GradientKernel kernel = &gradientBlock<kOut, kIn>;
};
constexpr auto kGradientKernels = kernelTable<GradientKernelFor, kGradientOuts, kGradientIns>();

// One item's part of dU (`du`, [position][out][in]) and of the bias gradient (the sum of a tile's
// dy is its dM at position (1, 1)): tile rows of one image, or (imagesPerItem > 1) whole images,
// their tiles one after the other.
void gradientItem(const float* x, const float* dy, int64_t images, int64_t firstTileRow,
                  const Plan& p, float* scratch, float* du, float* dbias) {
  const D d;
  const ItemScratch s = itemScratch(p, scratch);
  const int64_t tileRows = std::min(p.tileRowsPerItem, p.tilesH - firstTileRow);
  const int64_t imageTiles = tileRows * p.tilesW;
  const int64_t vectors = (images * imageTiles + kLanes - 1) / kLanes;
  const int64_t positionStride = p.outChannels * p.tileStride;
  for (int64_t n = 0; n < images; ++n) {
    transformInput(x + n * p.inChannels * p.inH * p.inW, firstTileRow, tileRows, p, s,
                   n * imageTiles);
    padChannels(dy + n * p.outChannels * p.outH * p.outW, p.outChannels, p.outH, p.outW,
                2 * firstTileRow, 2 * tileRows, 0, p, s.padded, [&](int64_t o, const float* rows) {
                  transformGradientChannel(rows, tileRows, p,
                                           s.products + o * p.tileStride + n * imageTiles,
                                           positionStride);
                });
  }
  // The last vector's lanes past the item's tiles hold what an earlier item left: zero them in dM,
  // so that they add nothing.
  const int64_t tiles = images * imageTiles;
  for (int64_t row = 0; row < kPositions * p.outChannels; ++row)
    std::fill(s.products + row * p.tileStride + tiles,
              s.products + row * p.tileStride + vectors * kLanes, 0.0f);
  for (int64_t position = 0; position < kPositions; ++position) {
    const float* dm = s.products + position * positionStride;
    const float* v = s.transformed + position * p.inChannels * p.tileStride;
    float* part = du + position * p.outChannels * p.inChannels;
    for (int64_t o = 0; o < p.outChannels; o += kGradientOuts) {
      const int64_t outs = std::min<int64_t>(kGradientOuts, p.outChannels - o);
      for (int64_t c = 0; c < p.inChannels; c += kGradientIns) {
        const int64_t ins = std::min<int64_t>(kGradientIns, p.inChannels - c);
        kGradientKernels[static_cast<size_t>(outs - 1)][static_cast<size_t>(ins - 1)](
            dm + o * p.tileStride, v + c * p.tileStride, p.tileStride, vectors,
            part + o * p.inChannels + c, p.inChannels);
      }
    }
  }
  for (int64_t o = 0; o < p.outChannels; ++o) {
    const float* sums = s.products + 5 * positionStride + o * p.tileStride;
    V total = hn::Zero(d);
    for (int64_t t = 0; t < vectors * kLanes; t += kLanes)
      total = hn::Add(total, hn::LoadU(d, sums + t));
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

namespace winograd {
namespace {

Plan planFor(const Shape& in, int64_t outChannels, int64_t outH, int64_t outW, int64_t padTop,
             int64_t padLeft, int64_t targetTiles = kTargetTilesPerItem, bool wholeImages = false) {
  Plan p{};
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
  // Interleaved loads of a row's last vector read 2 kMaxLanes + 2 floats from its first column.
  // (in whole vectors, so that rows are zeroed a vector at a time).
  p.paddedW =
      roundUp(std::max(2 * roundUp(p.tilesW, kMaxLanes) + 2, p.padLeft + roundUp(p.inW, kMaxLanes)),
              kMaxLanes);
  return p;
}

Plan forwardPlan(const Shape& x, const Shape& w, const WindowGeometry& g) {
  return planFor(x, w[0], g.outH(x[2]), g.outW(x[3]), g.padTop, g.padLeft);
}

// Backward data as a forward pass over dy: O input channels, C outputs, padding 2 - p.
Plan backwardDataPlan(const Shape& dx, const Shape& w, const WindowGeometry& g) {
  const Shape dy{dx[0], w[0], g.outH(dx[2]), g.outW(dx[3])};
  return planFor(dy, w[1], dx[2], dx[3], 2 - g.padTop, 2 - g.padLeft);
}

// The weight gradient reduces over tiles, so its items are larger: each ends in reductions of
// vectors of sums, one per (position, output, input channel), whatever its tile count.
Plan gradientPlan(const Shape& x, const Shape& dw, const WindowGeometry& g) {
  return planFor(x, dw[0], g.outH(x[2]), g.outW(x[3]), g.padTop, g.padLeft,
                 kTargetGradientTilesPerItem, true);
}

// Per thread, after the item scratch: its part of dU and of the bias gradient.
int64_t gradientThreadFloats(const Plan& p) {
  return p.threadFloats() + p.weightFloats() + roundUp(p.outChannels, kMaxLanes);
}

// G, the weight transform of F(2x2, 3x3): U = G g Gᵀ, and the weight gradient dW = Gᵀ dU G.
constexpr float kG[4][3] = {{1, 0, 0}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0, 0, 1}};

// dW = Gᵀ dU G of every weight plane, dU [position][out][in].
void weightsFromTransformed(const float* du, Tensor& dw) {
  const int64_t outs = dw.dim(0), ins = dw.dim(1);
  float* grad = dw.data();
  for (int64_t o = 0; o < outs; ++o)
    for (int64_t c = 0; c < ins; ++c) {
      float u[4][4];
      for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b) u[a][b] = du[((a * 4 + b) * outs + o) * ins + c];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
          float sum = 0.0f;
          for (int a = 0; a < 4; ++a)
            for (int b = 0; b < 4; ++b) sum += kG[a][i] * u[a][b] * kG[b][j];
          grad[(o * ins + c) * 9 + int64_t{i} * 3 + j] = sum;
        }
    }
}

// U = G g Gᵀ of every weight plane, into u[position][in][out]: g = w[out][in] (forward), or
// (backwardData) w[in][out] turned by 180 degrees.
void transformWeights(const Tensor& w, bool backwardData, float* u) {
  const int64_t outs = backwardData ? w.dim(1) : w.dim(0);
  const int64_t ins = backwardData ? w.dim(0) : w.dim(1);
  const float* weights = w.data();
  for (int64_t o = 0; o < outs; ++o)
    for (int64_t c = 0; c < ins; ++c) {
      const float* plane = weights + (backwardData ? c * outs + o : o * ins + c) * 9;
      float g[3][3];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          g[i][j] = backwardData ? plane[(2 - i) * 3 + (2 - j)] : plane[i * 3 + j];
      float gg[4][3] = {};  // G g
      for (int a = 0; a < 4; ++a)
        for (int j = 0; j < 3; ++j)
          for (int i = 0; i < 3; ++i) gg[a][j] += kG[a][i] * g[i][j];
      for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b) {
          float sum = 0.0f;
          for (int j = 0; j < 3; ++j) sum += gg[a][j] * kG[b][j];
          u[((a * 4 + b) * ins + c) * outs + o] = sum;
        }
    }
}

void run(const Plan& p, const float* in, const float* bias, float* out, float* scratch) {
#ifdef DL4CPP_X86_KERNELS
  const auto item = highwayKernel(&N_AVX3::runItem, &N_AVX2::runItem);
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

void checkSupported(const WindowGeometry& g, const Shape& w, const char* pass) {
  if (!winogradConvolutionSupported(g) || w.rank() != 4 || w[2] != 3 || w[3] != 3)
    throw BackendError(std::string("Winograd convolution ") + pass +
                       ": needs AVX2 or AVX-512 and a 3x3 kernel at stride 1 without dilation, "
                       "padding 0 to 2");
}

}  // namespace
}  // namespace winograd

bool winogradConvolutionFits(const WindowGeometry& g) {
  const auto padFits = [](int64_t pad) { return pad >= 0 && pad <= 2; };
  return g.kernelH == 3 && g.kernelW == 3 && g.strideH == 1 && g.strideW == 1 && g.dilationH == 1 &&
         g.dilationW == 1 && padFits(g.padTop) && padFits(g.padLeft) && padFits(g.padBottom) &&
         padFits(g.padRight);
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
  const winograd::Plan p = winograd::backwardDataPlan(dx, w, g);
  return p.weightFloats() + threads * p.threadFloats();
}

void winogradConvolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                                const WindowGeometry& g, float* scratch) {
  winograd::checkSupported(g, w.shape(), "forward");
  const winograd::Plan p = winograd::forwardPlan(x.shape(), w.shape(), g);
  winograd::transformWeights(w, false, scratch);
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
  const auto partsOf = [&](int thread) { return scratch + thread * perThread + p.threadFloats(); };
  const int64_t partFloats = p.weightFloats() + p.outChannels;
  for (int t = 0; t < threads; ++t) std::fill(partsOf(t), partsOf(t) + partFloats, 0.0f);
  const auto item = highwayKernel(&N_AVX3::gradientItem, &N_AVX2::gradientItem);
  const int64_t inImage = p.inChannels * p.inH * p.inW, outImage = p.outChannels * p.outH * p.outW;
  const int64_t imageGroups = (p.images + p.imagesPerItem - 1) / p.imagesPerItem;
  parallelForOnThreads(imageGroups * p.itemsPerImage, [&](int64_t i, int thread) {
    const int64_t n = i / p.itemsPerImage * p.imagesPerItem;
    const int64_t firstTileRow = i % p.itemsPerImage * p.tileRowsPerItem;
    float* parts = partsOf(thread);
    item(x.data() + n * inImage, dy.data() + n * outImage, std::min(p.imagesPerItem, p.images - n),
         firstTileRow, p, scratch + thread * perThread, parts, parts + p.weightFloats());
  });
  // The threads' parts, added in thread order into thread 0's.
  float* total = partsOf(0);
  for (int t = 1; t < threads; ++t) {
    const float* part = partsOf(t);
    for (int64_t i = 0; i < partFloats; ++i) total[i] += part[i];
  }
  winograd::weightsFromTransformed(total, dw);
  if (!db.empty()) std::copy(total + p.weightFloats(), total + partFloats, db.data());
#else
  (void)x, (void)dy, (void)dw, (void)db, (void)scratch;
#endif
}

void winogradConvolutionBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx,
                                     const WindowGeometry& g, float* scratch) {
  winograd::checkSupported(g, w.shape(), "backward data");
  const winograd::Plan p = winograd::backwardDataPlan(dx.shape(), w.shape(), g);
  winograd::transformWeights(w, true, scratch);
  winograd::run(p, dy.data(), nullptr, dx.data(), scratch);
}

}  // namespace dl4cpp::cpu
#endif  // HWY_ONCE
