// The 5x5 passes (forward, alone or with MAX pooling, backward data and the weight gradient) as
// F(4x4, 5x5) with images in the lanes (WinogradPlan.h, LanePlan): each vector holds one tile
// position of a group of kLanes images, so that every transform runs on whole vectors however small
// the images are. Highway compiles this file once per x86 level (HighwayTargets.h).
//
// A forward item is one tile row of a group. For each input channel, a tile's 8x8 patch of each
// image is turned into vectors over the images (transposes of kLanes x kLanes blocks) and
// transformed (V = Bᵀ d B); the products are, per position, a matrix product of U (output x input
// channels) and V (input channels x the chunk's tiles), on the same register blocks as the other
// Winograd passes; each output tile is Aᵀ M A, transposed back to one run of four outputs per image
// and row. Backward data runs a whole group's tile rows as the forward pass's adjoint
// (WinogradConvolution.h), summing the input gradient with images in the lanes and transposing it
// back once. The weight gradient multiplies V by dMᵀ, the output gradient's tiles transformed with
// output channels in the lanes, chunk by chunk of a group's tiles. Each output is one item's sum in
// a fixed order: results do not depend on the thread count.
#include "nn/backend/cpu/HighwayTargets.h"

#ifdef DL4CPP_X86_KERNELS
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "nn/backend/cpu/winograd/WinogradImageLanes.cpp"
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
constexpr int kTileSide = static_cast<int>(kLaneTile), kPatchSide = static_cast<int>(kLanePatch);

// Row i of kLanes vectors becomes column i: lane j of vector i goes to lane i of vector j.
// Unpacks within 128-bit blocks, then block shuffles (Highway 1.0 has no whole-block shuffle
// across four blocks).
// GCC 12 warns of the undefined first operand inside its own unpack and shuffle intrinsics, as
// Highway's x86 headers say where they turn the warnings off for the same intrinsics.
HWY_DIAGNOSTICS(push)
HWY_DIAGNOSTICS_OFF(disable : 4701, ignored "-Wuninitialized")
HWY_DIAGNOSTICS_OFF(disable : 4703 6001 26494, ignored "-Wmaybe-uninitialized")
HWY_INLINE void transposeSquare(V (&v)[kLanes]) {
#if HWY_TARGET == HWY_AVX3
  __m512 t[16], u[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(v[2 * i].raw, v[2 * i + 1].raw);
    t[2 * i + 1] = _mm512_unpackhi_ps(v[2 * i].raw, v[2 * i + 1].raw);
  }
  // u[4 i + k], block b: rows 4 i to 4 i + 3 at column 4 b + k.
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 2]);
    const __m512d c = _mm512_castps_pd(t[4 * i + 1]), e = _mm512_castps_pd(t[4 * i + 3]);
    u[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
    u[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
    u[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(c, e));
    u[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(c, e));
  }
  for (int k = 0; k < 4; ++k) {
    const __m512 even = _mm512_shuffle_f32x4(u[k], u[4 + k], 0x88);  // blocks 0, 2 of each
    const __m512 odd = _mm512_shuffle_f32x4(u[k], u[4 + k], 0xdd);   // blocks 1, 3
    const __m512 evenHigh = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0x88);
    const __m512 oddHigh = _mm512_shuffle_f32x4(u[8 + k], u[12 + k], 0xdd);
    v[k].raw = _mm512_shuffle_f32x4(even, evenHigh, 0x88);
    v[4 + k].raw = _mm512_shuffle_f32x4(odd, oddHigh, 0x88);
    v[8 + k].raw = _mm512_shuffle_f32x4(even, evenHigh, 0xdd);
    v[12 + k].raw = _mm512_shuffle_f32x4(odd, oddHigh, 0xdd);
  }
#else
  __m256 t[8], u[8];
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(v[2 * i].raw, v[2 * i + 1].raw);
    t[2 * i + 1] = _mm256_unpackhi_ps(v[2 * i].raw, v[2 * i + 1].raw);
  }
  for (int i = 0; i < 2; ++i) {
    const __m256d a = _mm256_castps_pd(t[4 * i]), b = _mm256_castps_pd(t[4 * i + 2]);
    const __m256d c = _mm256_castps_pd(t[4 * i + 1]), e = _mm256_castps_pd(t[4 * i + 3]);
    u[4 * i] = _mm256_castpd_ps(_mm256_unpacklo_pd(a, b));
    u[4 * i + 1] = _mm256_castpd_ps(_mm256_unpackhi_pd(a, b));
    u[4 * i + 2] = _mm256_castpd_ps(_mm256_unpacklo_pd(c, e));
    u[4 * i + 3] = _mm256_castpd_ps(_mm256_unpackhi_pd(c, e));
  }
  for (int k = 0; k < 4; ++k) {
    v[k].raw = _mm256_permute2f128_ps(u[k], u[4 + k], 0x20);
    v[4 + k].raw = _mm256_permute2f128_ps(u[k], u[4 + k], 0x31);
  }
#endif
}
HWY_DIAGNOSTICS(pop)

// F(4, 5)'s 1-D input transform Bᵀ d on the points 0, ±1, ±2, ±1/2 and ∞: (d0 - d6) +
// 21/4 (d4 - d2); (d2 - 17/4 d4 + d6) ± (d1 - 17/4 d3 + d5); (1/4 d2 - 5/4 d4 + d6) ± (1/2 d1 -
// 5/2 d3 + 2 d5); (4 d2 - 5 d4 + d6) ± (2 d1 - 5/2 d3 + 1/2 d5); (d7 - d1) + 21/4 (d3 - d5).
HWY_INLINE void inputTransform8(const V (&d)[kPatchSide], V (&out)[kPatchSide]) {
  const D df;
  const V c21_4 = hn::Set(df, 5.25f), c17_4 = hn::Set(df, 4.25f);
  const V c5_4 = hn::Set(df, 1.25f), c5_2 = hn::Set(df, 2.5f), quarter = hn::Set(df, 0.25f);
  const V half = hn::Set(df, 0.5f), two = hn::Set(df, 2.0f), four = hn::Set(df, 4.0f);
  const V five = hn::Set(df, 5.0f);
  out[0] = hn::MulAdd(c21_4, hn::Sub(d[4], d[2]), hn::Sub(d[0], d[6]));
  out[7] = hn::MulAdd(c21_4, hn::Sub(d[3], d[5]), hn::Sub(d[7], d[1]));
  const V a1 = hn::NegMulAdd(c17_4, d[4], hn::Add(d[2], d[6]));
  const V b1 = hn::NegMulAdd(c17_4, d[3], hn::Add(d[1], d[5]));
  out[1] = hn::Add(a1, b1);
  out[2] = hn::Sub(a1, b1);
  const V a3 = hn::MulAdd(quarter, d[2], hn::NegMulAdd(c5_4, d[4], d[6]));
  const V b3 = hn::MulAdd(half, d[1], hn::NegMulAdd(c5_2, d[3], hn::Mul(two, d[5])));
  out[3] = hn::Add(a3, b3);
  out[4] = hn::Sub(a3, b3);
  const V a5 = hn::MulAdd(four, d[2], hn::NegMulAdd(five, d[4], d[6]));
  const V b5 = hn::MulAdd(two, d[1], hn::NegMulAdd(c5_2, d[3], hn::Mul(half, d[5])));
  out[5] = hn::Add(a5, b5);
  out[6] = hn::Sub(a5, b5);
}

// F(4, 5)'s 1-D output transform Aᵀ m: m0 + s1 + s3 + s5, e1 + 2 e3 + 1/2 e5, s1 + 4 s3 + 1/4 s5,
// e1 + 8 e3 + 1/8 e5 + m7, with s and e the sums and differences of the pairs (1, 2), (3, 4) and
// (5, 6).
HWY_INLINE void outputTransform8(const V (&m)[kPatchSide], V (&out)[kTileSide]) {
  const D d;
  const V s1 = hn::Add(m[1], m[2]), e1 = hn::Sub(m[1], m[2]);
  const V s3 = hn::Add(m[3], m[4]), e3 = hn::Sub(m[3], m[4]);
  const V s5 = hn::Add(m[5], m[6]), e5 = hn::Sub(m[5], m[6]);
  out[0] = hn::Add(hn::Add(m[0], s1), hn::Add(s3, s5));
  out[1] = hn::MulAdd(hn::Set(d, 2.0f), e3, hn::MulAdd(hn::Set(d, 0.5f), e5, e1));
  out[2] = hn::MulAdd(hn::Set(d, 4.0f), s3, hn::MulAdd(hn::Set(d, 0.25f), s5, s1));
  out[3] = hn::Add(hn::MulAdd(hn::Set(d, 8.0f), e3, hn::MulAdd(hn::Set(d, 0.125f), e5, e1)), m[7]);
}

// kRows patch rows of 8 pixels from `at` on, rows `width` floats apart, as one vector.
template <int kRows>
HWY_INLINE V loadPatchRows(const float* at, int64_t width) {
  const D d;
  if constexpr (kRows == 2) {
    const hn::Half<D> half;
    return hn::Combine(d, hn::LoadU(half, at + width), hn::LoadU(half, at));
  } else {
    static_assert(kRows == 1);
    (void)width;
    return hn::LoadU(d, at);
  }
}

// One input channel's 8x8 patch of a tile for the group's `count` images (lanes past them zero),
// its top-left input pixel at (y0, x0) (negative or past the plane where the tile meets the
// padding: those pixels read zero), into patch[(row * 8 + column) * kLanes + image].
void loadPatch(const float* channel, int64_t imageStride, int64_t count, int64_t y0, int64_t x0,
               const LanePlan& p, float* patch) {
  const D d;
  if (y0 >= 0 && x0 >= 0 && y0 + kPatchSide <= p.inH && x0 + kPatchSide <= p.inW) {
    // kLanes / 8 patch rows of every image per transpose.
    constexpr int kRows = static_cast<int>(kLanes) / kPatchSide;
    for (int i = 0; i < kPatchSide; i += kRows) {
      V v[kLanes];
      for (int64_t n = 0; n < kLanes; ++n) {
        if (n >= count) {
          v[n] = hn::Zero(d);
          continue;
        }
        v[n] = loadPatchRows<kRows>(channel + n * imageStride + (y0 + i) * p.inW + x0, p.inW);
      }
      transposeSquare(v);
      for (int64_t k = 0; k < kLanes; ++k)
        hn::StoreU(v[k], d, patch + (i * kPatchSide + k) * kLanes);
    }
    return;
  }
  for (int i = 0; i < kPatchSide; ++i)
    for (int j = 0; j < kPatchSide; ++j) {
      const int64_t y = y0 + i, x = x0 + j;
      const bool inside = y >= 0 && y < p.inH && x >= 0 && x < p.inW;
      float* lanes = patch + (i * kPatchSide + j) * kLanes;
      for (int64_t n = 0; n < kLanes; ++n)
        lanes[n] = inside && n < count ? channel[n * imageStride + y * p.inW + x] : 0.0f;
    }
}

// V = Bᵀ d B of a patch: down each column in place, then along each row into
// out[position * positionStride].
void transformPatch(float* patch, float* out, int64_t positionStride) {
  const D d;
  for (int j = 0; j < kPatchSide; ++j) {
    V column[kPatchSide], v[kPatchSide];
    for (int i = 0; i < kPatchSide; ++i)
      column[i] = hn::LoadU(d, patch + (i * kPatchSide + j) * kLanes);
    inputTransform8(column, v);
    for (int i = 0; i < kPatchSide; ++i) hn::StoreU(v[i], d, patch + (i * kPatchSide + j) * kLanes);
  }
  for (int i = 0; i < kPatchSide; ++i) {
    V row[kPatchSide], v[kPatchSide];
    for (int j = 0; j < kPatchSide; ++j)
      row[j] = hn::LoadU(d, patch + (i * kPatchSide + j) * kLanes);
    inputTransform8(row, v);
    for (int j = 0; j < kPatchSide; ++j)
      hn::StoreU(v[j], d, out + (i * kPatchSide + j) * positionStride);
  }
}

// The products of a chunk, for each position: out[o][t] = Σ_c weights[c][o] · in[c][t] over `ins`
// channels of `in` into `outs` of `out`, `tiles` vectors per channel (tilesPerChunk vectors
// apart), output channels in even blocks of the register block's size (50 at one vector:
// 17 + 17 + 16, not 24 + 24 + 2).
void multiplyChunk(const float* weights, int64_t tiles, int64_t ins, int64_t outs,
                   const LanePlan& p, const float* in, int64_t inStride, float* out,
                   int64_t outStride) {
  const int64_t tileStride = p.tilesPerChunk * kLanes;
  const int64_t blocks = evenBlocks(outs, outBlockFor(tiles));
  const auto kernels = kProductKernels;
  for (int64_t position = 0; position < kLanePositions; ++position) {
    const float* u = weights + position * ins * outs;
    for (int64_t i = 0, o = 0; i < blocks; ++i) {
      const int64_t block = evenBlock(outs, blocks, i);
      kernels[static_cast<size_t>(block - 1)][static_cast<size_t>(tiles - 1)](
          u + o, outs, in + position * inStride, tileStride,
          out + position * outStride + o * tileStride, ins);
      o += block;
    }
  }
}

// One output channel's tile: Aᵀ M A + bias for the group's images, each image's 4x4 outputs
// stored from (4 tr, 4 tc) of its plane in `out` (images imageStride floats apart), clipped to the
// plane.
void storeOutputTile(const float* m, int64_t positionStride, float bias, int64_t count, int64_t tr,
                     int64_t tc, const LanePlan& p, float* out, int64_t imageStride) {
  const D d;
  V rows[kTileSide][kPatchSide];  // Aᵀ down each column: rows[r][column]
  for (int j = 0; j < kPatchSide; ++j) {
    V column[kPatchSide], o[kTileSide];
    for (int i = 0; i < kPatchSide; ++i)
      column[i] = hn::LoadU(d, m + (i * kPatchSide + j) * positionStride);
    outputTransform8(column, o);
    for (int r = 0; r < kTileSide; ++r) rows[r][j] = o[r];
  }
  constexpr int kOutputs = kTileSide * kTileSide;  // 16: one or two blocks of kLanes
  V outputs[kOutputs];
  const V b = hn::Set(d, bias);
  for (int r = 0; r < kTileSide; ++r) {
    V o[kTileSide];
    outputTransform8(rows[r], o);
    for (int c = 0; c < kTileSide; ++c) outputs[r * kTileSide + c] = hn::Add(o[c], b);
  }
  HWY_ALIGN float tile[kMaxLanes][kOutputs];  // each image's 16 outputs, row by row
  for (int first = 0; first < kOutputs; first += static_cast<int>(kLanes)) {
    V block[kLanes];
    for (int64_t k = 0; k < kLanes; ++k) block[k] = outputs[first + k];
    transposeSquare(block);
    for (int64_t n = 0; n < kLanes; ++n) hn::StoreU(block[n], d, tile[n] + first);
  }
  const int64_t rowsInPlane = std::min<int64_t>(kTileSide, p.outH - kTileSide * tr);
  const int64_t columns = std::min<int64_t>(kTileSide, p.outW - kTileSide * tc);
  const hn::Full128<float> run;  // one row's four outputs
  for (int64_t n = 0; n < count; ++n) {
    float* at = out + n * imageStride + kTileSide * tr * p.outW + kTileSide * tc;
    for (int64_t r = 0; r < rowsInPlane; ++r) {
      if (columns == kTileSide)
        hn::StoreU(hn::Load(run, tile[n] + r * kTileSide), run, at + r * p.outW);
      else
        for (int64_t c = 0; c < columns; ++c) at[r * p.outW + c] = tile[n][r * kTileSide + c];
    }
  }
}

// Tile row tr of a group: `count` images from x on (an image every inImage floats) into y (every
// outImage floats), in chunks of tilesPerChunk tiles.
void forwardItem(const float* x, const float* weights, const float* bias, float* y, int64_t count,
                 int64_t tr, const LanePlan& p, float* scratch) {
  float* patch = scratch;
  float* v = patch + kLanePositions * kLanes;
  float* m = v + kLanePositions * p.transformedStride();
  const int64_t planeIn = p.inH * p.inW, planeOut = p.outH * p.outW;
  for (int64_t tc0 = 0; tc0 < p.tilesW; tc0 += p.tilesPerChunk) {
    const int64_t tiles = std::min(p.tilesPerChunk, p.tilesW - tc0);
    for (int64_t c = 0; c < p.inChannels; ++c)
      for (int64_t t = 0; t < tiles; ++t) {
        loadPatch(x + c * planeIn, p.inImage(), count, kTileSide * tr - p.padTop,
                  kTileSide * (tc0 + t) - p.padLeft, p, patch);
        transformPatch(patch, v + (c * p.tilesPerChunk + t) * kLanes, p.transformedStride());
      }
    multiplyChunk(weights, tiles, p.inChannels, p.outChannels, p, v, p.transformedStride(), m,
                  p.productStride());
    for (int64_t o = 0; o < p.outChannels; ++o)
      for (int64_t t = 0; t < tiles; ++t)
        storeOutputTile(m + (o * p.tilesPerChunk + t) * kLanes, p.productStride(),
                        bias ? bias[o] : 0.0f, count, tr, tc0 + t, p, y + o * planeOut,
                        p.outImage());
  }
}

// --- Backward data: the forward pass's adjoint. dM = A dY Aᵀ of each output tile, dV = Uᵀ dM per
// position (the forward weights transposed), and each tile's B dV Bᵀ added into the group's input
// gradient, held with images in the lanes until every tile is in.

// F(4, 5)'s A, the output transform's adjoint: four outputs' gradients to the patch's eight
// positions: y0, (y0 + y2) ± (y1 + y3), (y0 + 4 y2) ± (2 y1 + 8 y3), (y0 + 1/4 y2) ± (1/2 y1 +
// 1/8 y3), y3.
HWY_INLINE void outputTransformTransposed8(const V (&y)[kTileSide], V (&out)[kPatchSide]) {
  const D d;
  const V even1 = hn::Add(y[0], y[2]), odd1 = hn::Add(y[1], y[3]);
  const V even3 = hn::MulAdd(hn::Set(d, 4.0f), y[2], y[0]);
  const V odd3 = hn::MulAdd(hn::Set(d, 8.0f), y[3], hn::Add(y[1], y[1]));
  const V even5 = hn::MulAdd(hn::Set(d, 0.25f), y[2], y[0]);
  const V odd5 = hn::MulAdd(hn::Set(d, 0.125f), y[3], hn::Mul(hn::Set(d, 0.5f), y[1]));
  out[0] = y[0];
  out[1] = hn::Add(even1, odd1);
  out[2] = hn::Sub(even1, odd1);
  out[3] = hn::Add(even3, odd3);
  out[4] = hn::Sub(even3, odd3);
  out[5] = hn::Add(even5, odd5);
  out[6] = hn::Sub(even5, odd5);
  out[7] = y[3];
}

// The input transform's adjoint B v (out[k] = Σ_i Bᵀ[i][k] v_i), with s and e the sums and
// differences of the pairs (1, 2), (3, 4) and (5, 6): v0; e1 + 1/2 e3 + 2 e5 - v7; s1 + 1/4 s3 +
// 4 s5 - 21/4 v0; 21/4 v7 - 17/4 e1 - 5/2 (e3 + e5); 21/4 v0 - 17/4 s1 - 5/4 s3 - 5 s5; e1 + 2 e3
// + 1/2 e5 - 21/4 v7; s1 + s3 + s5 - v0; v7.
HWY_INLINE void inputTransformTransposed8(const V (&v)[kPatchSide], V (&out)[kPatchSide]) {
  const D d;
  const V c21_4 = hn::Set(d, 5.25f), c17_4 = hn::Set(d, 4.25f), half = hn::Set(d, 0.5f);
  const V two = hn::Set(d, 2.0f);
  const V s1 = hn::Add(v[1], v[2]), e1 = hn::Sub(v[1], v[2]);
  const V s3 = hn::Add(v[3], v[4]), e3 = hn::Sub(v[3], v[4]);
  const V s5 = hn::Add(v[5], v[6]), e5 = hn::Sub(v[5], v[6]);
  out[0] = v[0];
  out[1] = hn::Sub(hn::MulAdd(two, e5, hn::MulAdd(half, e3, e1)), v[7]);
  out[2] = hn::NegMulAdd(c21_4, v[0],
                         hn::MulAdd(hn::Set(d, 4.0f), s5, hn::MulAdd(hn::Set(d, 0.25f), s3, s1)));
  out[3] = hn::NegMulAdd(hn::Set(d, 2.5f), hn::Add(e3, e5),
                         hn::NegMulAdd(c17_4, e1, hn::Mul(c21_4, v[7])));
  out[4] = hn::NegMulAdd(
      hn::Set(d, 5.0f), s5,
      hn::NegMulAdd(hn::Set(d, 1.25f), s3, hn::NegMulAdd(c17_4, s1, hn::Mul(c21_4, v[0]))));
  out[5] = hn::NegMulAdd(c21_4, v[7], hn::MulAdd(half, e5, hn::MulAdd(two, e3, e1)));
  out[6] = hn::Sub(hn::Add(s1, hn::Add(s3, s5)), v[0]);
  out[7] = v[7];
}

// One output channel's tile of dy for the group's `count` images (lanes past them, and outputs past
// the plane, zero): dM = A dY Aᵀ into out[position * positionStride].
void transformOutputGradientTile(const float* plane, int64_t imageStride, int64_t count, int64_t tr,
                                 int64_t tc, const LanePlan& p, float* out,
                                 int64_t positionStride) {
  const D d;
  constexpr int kOutputs = kTileSide * kTileSide;
  HWY_ALIGN float tile[kMaxLanes][kOutputs] = {};  // each image's 16 gradients, row by row
  const int64_t rowsInPlane = std::min<int64_t>(kTileSide, p.outH - kTileSide * tr);
  const int64_t columns = std::min<int64_t>(kTileSide, p.outW - kTileSide * tc);
  const hn::Full128<float> run;
  for (int64_t n = 0; n < count; ++n) {
    const float* at = plane + n * imageStride + kTileSide * tr * p.outW + kTileSide * tc;
    for (int64_t r = 0; r < rowsInPlane; ++r) {
      if (columns == kTileSide)
        hn::Store(hn::LoadU(run, at + r * p.outW), run, tile[n] + r * kTileSide);
      else
        for (int64_t c = 0; c < columns; ++c) tile[n][r * kTileSide + c] = at[r * p.outW + c];
    }
  }
  V y[kOutputs];
  for (int first = 0; first < kOutputs; first += static_cast<int>(kLanes)) {
    V block[kLanes];
    for (int64_t n = 0; n < kLanes; ++n) block[n] = hn::Load(d, tile[n] + first);
    transposeSquare(block);
    for (int64_t k = 0; k < kLanes; ++k) y[first + k] = block[k];
  }
  V rows[kTileSide][kPatchSide];  // A along each output row: rows[r][column]
  for (int r = 0; r < kTileSide; ++r) {
    const V row[kTileSide] = {y[r * kTileSide], y[r * kTileSide + 1], y[r * kTileSide + 2],
                              y[r * kTileSide + 3]};
    outputTransformTransposed8(row, rows[r]);
  }
  for (int j = 0; j < kPatchSide; ++j) {
    const V column[kTileSide] = {rows[0][j], rows[1][j], rows[2][j], rows[3][j]};
    V m[kPatchSide];
    outputTransformTransposed8(column, m);
    for (int i = 0; i < kPatchSide; ++i)
      hn::StoreU(m[i], d, out + (i * kPatchSide + j) * positionStride);
  }
}

// One input channel's tile of dV: B dV Bᵀ, added into `acc` (the channel's gradient rows with
// images in the lanes, kLanes floats a pixel) at the tile's patch, row 4 tr and column 4 tc.
void addInputGradientTile(const float* dv, int64_t positionStride, int64_t tr, int64_t tc,
                          const LanePlan& p, float* patch, float* acc) {
  const D d;
  for (int j = 0; j < kPatchSide; ++j) {
    V column[kPatchSide], v[kPatchSide];
    for (int i = 0; i < kPatchSide; ++i)
      column[i] = hn::LoadU(d, dv + (i * kPatchSide + j) * positionStride);
    inputTransformTransposed8(column, v);
    for (int a = 0; a < kPatchSide; ++a) hn::StoreU(v[a], d, patch + (a * kPatchSide + j) * kLanes);
  }
  const int64_t width = p.adjointWidth();
  for (int a = 0; a < kPatchSide; ++a) {
    V row[kPatchSide], v[kPatchSide];
    for (int j = 0; j < kPatchSide; ++j)
      row[j] = hn::LoadU(d, patch + (a * kPatchSide + j) * kLanes);
    inputTransformTransposed8(row, v);
    float* at = acc + ((kTileSide * tr + a) * width + kTileSide * tc) * kLanes;
    for (int b = 0; b < kPatchSide; ++b)
      hn::StoreU(hn::Add(hn::LoadU(d, at + b * kLanes), v[b]), d, at + b * kLanes);
  }
}

// Each image's input gradient out of `acc` (input channels' rows with images in the lanes, the
// padding around them) into dx, kLanes pixels of a row per transpose.
void storeInputGradient(const float* acc, int64_t count, const LanePlan& p, float* dx) {
  const D d;
  const int64_t width = p.adjointWidth(), planeRows = p.adjointRows();
  for (int64_t c = 0; c < p.inChannels; ++c)
    for (int64_t y = 0; y < p.inH; ++y) {
      const float* row = acc + ((c * planeRows + p.padTop + y) * width + p.padLeft) * kLanes;
      for (int64_t x0 = 0; x0 < p.inW; x0 += kLanes) {
        V pixels[kLanes];
        for (int64_t k = 0; k < kLanes; ++k) pixels[k] = hn::LoadU(d, row + (x0 + k) * kLanes);
        transposeSquare(pixels);
        const int64_t columns = std::min<int64_t>(kLanes, p.inW - x0);
        for (int64_t n = 0; n < count; ++n) {
          float* at = dx + n * p.inImage() + (c * p.inH + y) * p.inW + x0;
          if (columns == kLanes)
            hn::StoreU(pixels[n], d, at);
          else
            hn::BlendedStore(pixels[n], hn::FirstN(d, static_cast<size_t>(columns)), d, at);
        }
      }
    }
}

// --- Weight gradient: dU[position][c][o] = Σ over a group's tiles and images of V[position][c] ·
// dMᵀ[position][o], V from the forward pass's input transform (images in the lanes), dM = A dY Aᵀ
// with output channels in the lanes; each block's sums are whole vectors of dU, added to in place,
// so no sum is reduced across lanes.

// One image's dy rows of tile row tr transposed to rows[pixel * paddedOutChannels + o] (pixel =
// row * outW + column), kLanes channels by kLanes pixels per transpose, zeros past the channels.
void transposeGradientRows(const float* dyImage, int64_t tr, const LanePlan& p, float* rows) {
  const D d;
  const int64_t channels = p.paddedOutChannels();
  const int64_t pixels = std::min<int64_t>(kTileSide, p.outH - kTileSide * tr) * p.outW;
  const int64_t planeOut = p.outH * p.outW;
  for (int64_t o0 = 0; o0 < channels; o0 += kLanes)
    for (int64_t p0 = 0; p0 < pixels; p0 += kLanes) {
      const auto present = hn::FirstN(d, static_cast<size_t>(std::min(kLanes, pixels - p0)));
      V v[kLanes];
      for (int64_t k = 0; k < kLanes; ++k)
        v[k] = o0 + k < p.outChannels
                   ? hn::MaskedLoad(present, d,
                                    dyImage + (o0 + k) * planeOut + kTileSide * tr * p.outW + p0)
                   : hn::Zero(d);
      transposeSquare(v);
      for (int64_t k = 0; k < kLanes && p0 + k < pixels; ++k)
        hn::StoreU(v[k], d, rows + (p0 + k) * channels + o0);
    }
}

// dMᵀ = A dY Aᵀ of one image's tile tc (of the tile row `rows` holds), vectors of output channels,
// into out[position * positionStride + o]; gradients past the plane are zero.
void transformGradientTileChannelLanes(const float* rows, int64_t tr, int64_t tc, const LanePlan& p,
                                       float* out, int64_t positionStride) {
  const D d;
  const int64_t channels = p.paddedOutChannels();
  const int64_t rowsInPlane = std::min<int64_t>(kTileSide, p.outH - kTileSide * tr);
  const int64_t columns = std::min<int64_t>(kTileSide, p.outW - kTileSide * tc);
  for (int64_t o = 0; o < channels; o += kLanes) {
    V h[kTileSide][kPatchSide];  // A along each output row
    for (int r = 0; r < kTileSide; ++r) {
      V y[kTileSide];
      for (int c = 0; c < kTileSide; ++c)
        y[c] = r < rowsInPlane && c < columns
                   ? hn::LoadU(d, rows + (r * p.outW + kTileSide * tc + c) * channels + o)
                   : hn::Zero(d);
      outputTransformTransposed8(y, h[r]);
    }
    for (int j = 0; j < kPatchSide; ++j) {
      const V column[kTileSide] = {h[0][j], h[1][j], h[2][j], h[3][j]};
      V m[kPatchSide];
      outputTransformTransposed8(column, m);
      for (int i = 0; i < kPatchSide; ++i)
        hn::StoreU(m[i], d, out + (i * kPatchSide + j) * positionStride + o);
    }
  }
}

// Input channels x vectors of output channels of one position's sums over `tiles` (V's lanes
// and dMᵀ's rows), added to du[c * duRow + o]: at AVX-512 5 x 4 (20 sums, 4 loads and 5
// broadcasts a step), at AVX2 4 x 3 (12 sums, 3 loads and 4 broadcasts).
#if HWY_TARGET == HWY_AVX3
constexpr int kGradientIns = 5, kGradientOutVectors = 4;
#else
constexpr int kGradientIns = 4, kGradientOutVectors = 3;
#endif

template <int kIns, int kOutVectors>
void gradientBlock(const float* v, int64_t tileStride, const float* dm, int64_t dmRow,
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

using GradientKernel = void (*)(const float*, int64_t, const float*, int64_t, int64_t, float*,
                                int64_t);
template <int kIns, int kOutVectors>
struct GradientKernelFor {
  static constexpr GradientKernel kernel = &gradientBlock<kIns, kOutVectors>;
};
constexpr auto kGradientKernels =
    kernelTable<GradientKernelFor, kGradientIns, kGradientOutVectors>();

}  // namespace

// One group's input gradient: `count` images of dy from `dy` on into dx, every pixel written.
void laneBackwardDataGroup(const float* dy, const float* weights, float* dx, int64_t count,
                           const LanePlan& p, float* scratch) {
  float* patch = scratch;
  float* dm = patch + kLanePositions * kLanes;
  float* dv = dm + kLanePositions * p.productStride();
  float* acc = dv + kLanePositions * p.transformedStride();
  const int64_t accFloats = p.inChannels * p.adjointRows() * p.adjointWidth() * kLanes;
  std::fill(acc, acc + accFloats, 0.0f);
  const int64_t planeOut = p.outH * p.outW;
  for (int64_t tr = 0; tr < p.tilesH; ++tr)
    for (int64_t tc0 = 0; tc0 < p.tilesW; tc0 += p.tilesPerChunk) {
      const int64_t tiles = std::min(p.tilesPerChunk, p.tilesW - tc0);
      for (int64_t o = 0; o < p.outChannels; ++o)
        for (int64_t t = 0; t < tiles; ++t)
          transformOutputGradientTile(dy + o * planeOut, p.outImage(), count, tr, tc0 + t, p,
                                      dm + (o * p.tilesPerChunk + t) * kLanes, p.productStride());
      multiplyChunk(weights, tiles, p.outChannels, p.inChannels, p, dm, p.productStride(), dv,
                    p.transformedStride());
      for (int64_t c = 0; c < p.inChannels; ++c)
        for (int64_t t = 0; t < tiles; ++t)
          addInputGradientTile(dv + (c * p.tilesPerChunk + t) * kLanes, p.transformedStride(), tr,
                               tc0 + t, p, patch,
                               acc + c * p.adjointRows() * p.adjointWidth() * kLanes);
    }
  storeInputGradient(acc, count, p, dx);
}

// One group's part of dU (`du`, [position][in][padded out]) and of the bias gradient (`dbias`; the
// sum of a tile's dy is its dM at position (1, 1)): `count` images of x and dy from `x` and `dy`
// on.
void laneGradientGroup(const float* x, const float* dy, int64_t count, const LanePlan& p,
                       float* scratch, float* du, float* dbias) {
  const D d;
  float* patch = scratch;
  float* v = patch + kLanePositions * kLanes;
  float* dm = v + kLanePositions * p.transformedStride();
  float* rows = dm + kLanePositions * p.gradientPositionStride();
  const int64_t channels = p.paddedOutChannels(), positionStride = p.gradientPositionStride();
  const int64_t planeIn = p.inH * p.inW, tileStride = p.tilesPerChunk * kLanes;
  const int64_t vectors = channels / kLanes;
  const int64_t blocks = evenBlocks(vectors, kGradientOutVectors);
  for (int64_t tr = 0; tr < p.tilesH; ++tr)
    for (int64_t tc0 = 0; tc0 < p.tilesW; tc0 += p.tilesPerChunk) {
      const int64_t tiles = std::min(p.tilesPerChunk, p.tilesW - tc0);
      for (int64_t c = 0; c < p.inChannels; ++c)
        for (int64_t t = 0; t < tiles; ++t) {
          loadPatch(x + c * planeIn, p.inImage(), count, kTileSide * tr - p.padTop,
                    kTileSide * (tc0 + t) - p.padLeft, p, patch);
          transformPatch(patch, v + (c * p.tilesPerChunk + t) * kLanes, p.transformedStride());
        }
      // dMᵀ rows (tile, image); the rows of lanes past the group's images are zero, as V's are.
      for (int64_t n = 0; n < kLanes; ++n) {
        if (n < count) transposeGradientRows(dy + n * p.outImage(), tr, p, rows);
        for (int64_t t = 0; t < tiles; ++t) {
          float* out = dm + (t * kLanes + n) * channels;
          if (n < count) {
            transformGradientTileChannelLanes(rows, tr, tc0 + t, p, out, positionStride);
            continue;
          }
          for (int64_t position = 0; position < kLanePositions; ++position)
            for (int64_t o = 0; o < channels; o += kLanes)
              hn::StoreU(hn::Zero(d), d, out + position * positionStride + o);
        }
      }
      const int64_t sums = tiles * kLanes;
      for (int64_t position = 0; position < kLanePositions; ++position) {
        const float* vp = v + position * p.transformedStride();
        const float* dmp = dm + position * positionStride;
        float* part = du + position * p.inChannels * channels;
        for (int64_t i = 0, o = 0; i < blocks; ++i) {
          const int64_t block = evenBlock(vectors, blocks, i);
          for (int64_t c = 0; c < p.inChannels; c += kGradientIns) {
            const int64_t ins = std::min<int64_t>(kGradientIns, p.inChannels - c);
            kGradientKernels[static_cast<size_t>(ins - 1)][static_cast<size_t>(block - 1)](
                vp + c * tileStride, tileStride, dmp + o * kLanes, channels, sums,
                part + c * channels + o * kLanes, channels);
          }
          o += block;
        }
      }
      const float* totals = dm + (kPatchSide + 1) * positionStride;  // position (1, 1)
      for (int64_t o = 0; o < channels; o += kLanes) {
        V total = hn::LoadU(d, dbias + o);
        for (int64_t k = 0; k < sums; ++k)
          total = hn::Add(total, hn::LoadU(d, totals + k * channels + o));
        hn::StoreU(total, d, dbias + o);
      }
    }
}

// Tile rows [firstRow, lastRow) of the group of `count` images from x on, into y.
void laneForwardRows(const float* x, const float* weights, const float* bias, float* y,
                     int64_t count, int64_t firstRow, int64_t lastRow, const LanePlan& p,
                     float* scratch) {
  for (int64_t tr = firstRow; tr < lastRow; ++tr)
    forwardItem(x, weights, bias, y, count, tr, p, scratch);
}

#endif  // DL4CPP_HWY_KERNEL_TARGET
}  // namespace dl4cpp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
#endif  // DL4CPP_X86_KERNELS

#if !defined(DL4CPP_X86_KERNELS) || HWY_ONCE
namespace dl4cpp::cpu {

namespace winograd {

#ifdef DL4CPP_X86_KERNELS
namespace {
using RowsKernel = void (*)(const float*, const float*, const float*, float*, int64_t, int64_t,
                            int64_t, const LanePlan&, float*);
RowsKernel rowsKernel() {
  return highwayKernel(&N_AVX3::laneForwardRows, &N_AVX2::laneForwardRows);
}
}  // namespace
#endif

int64_t laneForwardScratchFloats(const LanePlan& p, int threads) {
  return p.weightFloats() + threads * p.threadFloats();
}

// Items of one tile row of a group, then f on the item's output rows of each plane while they are
// in cache.
void runLaneForward(const LanePlan& p, const Tensor& x, const Tensor& w, const float* bias,
                    float* y, float* scratch, const FusedActivation& f) {
#ifdef DL4CPP_X86_KERNELS
  transformLaneWeights(w, WeightsFor::Forward, scratch);
  const RowsKernel rows = rowsKernel();
  float* threadScratch = scratch + p.weightFloats();
  parallelForOnThreads(p.groups() * p.tilesH, [&](int64_t i, int thread) {
    const int64_t group = i / p.tilesH, tr = i % p.tilesH;
    const int64_t first = group * p.lanes, count = std::min(p.lanes, p.images - first);
    float* out = y + first * p.outImage();
    rows(x.data() + first * p.inImage(), scratch, bias, out, count, tr, tr + 1, p,
         threadScratch + thread * p.threadFloats());
    if (f.kind == ActivationKind::IDENTITY) return;
    const int64_t firstRow = kLaneTile * tr;
    const int64_t outRows = std::min(kLaneTile, p.outH - firstRow);
    for (int64_t n = 0; n < count; ++n)
      for (int64_t o = 0; o < p.outChannels; ++o)
        applyFusedActivation(f, out + n * p.outImage() + (o * p.outH + firstRow) * p.outW,
                             outRows * p.outW);
  });
#else
  (void)p, (void)x, (void)w, (void)bias, (void)y, (void)scratch, (void)f;
#endif
}

// Per thread, with max pooling: the item scratch, then one group's convolution output, in whole
// cache lines so that the threads' buffers never share one.
int64_t laneFusedThreadFloats(const LanePlan& p) {
  return wholeCacheLines(p.threadFloats() + p.lanes * p.outImage());
}

int64_t laneMaxPoolingForwardScratchFloats(const LanePlan& p, int threads) {
  return wholeCacheLines(p.weightFloats()) + threads * laneFusedThreadFloats(p);
}

void runLaneMaxPoolingForward(const LanePlan& p, const Tensor& x, const Tensor& w,
                              const float* bias, Tensor& pooled, const FusedActivation& f,
                              const WindowGeometry& poolG, uint8_t* argmax, float* scratch) {
#ifdef DL4CPP_X86_KERNELS
  transformLaneWeights(w, WeightsFor::Forward, scratch);
  const RowsKernel rows = rowsKernel();
  const PlaneExtents e{p.outH, p.outW, pooled.dim(2), pooled.dim(3)};
  const int64_t pooledImage = p.outChannels * e.outH * e.outW;
  parallelForOnThreads(p.groups(), [&](int64_t group, int thread) {
    float* itemScratch =
        scratch + wholeCacheLines(p.weightFloats()) + thread * laneFusedThreadFloats(p);
    float* convolved = itemScratch + p.threadFloats();
    const int64_t first = group * p.lanes, count = std::min(p.lanes, p.images - first);
    rows(x.data() + first * p.inImage(), scratch, bias, convolved, count, 0, p.tilesH, p,
         itemScratch);
    applyFusedActivation(f, convolved, count * p.outImage());
    maxPoolingForwardPlanes(convolved, pooled.data() + first * pooledImage,
                            argmax ? argmax + first * pooledImage : nullptr, count * p.outChannels,
                            e, poolG);
  });
#else
  (void)p, (void)x, (void)w, (void)bias, (void)pooled, (void)f, (void)poolG, (void)argmax,
      (void)scratch;
#endif
}

int64_t laneBackwardWeightsScratchFloats(const LanePlan& p, int threads) {
  return threads * wholeCacheLines(p.gradientThreadFloats()) +
         chunksOf(p.groups()).count * p.gradientPartFloats();
}

void runLaneBackwardWeights(const LanePlan& p, const Tensor& x, const Tensor& dy, Tensor& dw,
                            Tensor& db, float* scratch) {
#ifdef DL4CPP_X86_KERNELS
  const int threads = singleThreaded() ? 1 : omp_get_max_threads();
  const int64_t perThread = wholeCacheLines(p.gradientThreadFloats());
  const int64_t partFloats = p.gradientPartFloats();
  const int64_t biasOffset = partFloats - p.paddedOutChannels();
  float* parts = scratch + threads * perThread;
  const auto group = highwayKernel(&N_AVX3::laneGradientGroup, &N_AVX2::laneGradientGroup);
  sumInChunks(p.groups(), partFloats, parts, [&](int64_t g, int thread, float* part) {
    const int64_t first = g * p.lanes, count = std::min(p.lanes, p.images - first);
    group(x.data() + first * p.inImage(), dy.data() + first * p.outImage(), count, p,
          scratch + thread * perThread, part, part + biasOffset);
  });
  laneWeightsFromTransformed(parts, p, dw);
  if (!db.empty()) std::copy(parts + biasOffset, parts + biasOffset + p.outChannels, db.data());
#else
  (void)p, (void)x, (void)dy, (void)dw, (void)db, (void)scratch;
#endif
}

int64_t laneBackwardDataScratchFloats(const LanePlan& p, int threads) {
  return wholeCacheLines(p.weightFloats()) + threads * wholeCacheLines(p.adjointThreadFloats());
}

void runLaneBackwardData(const LanePlan& p, const Tensor& dy, const Tensor& w, Tensor& dx,
                         float* scratch) {
#ifdef DL4CPP_X86_KERNELS
  transformLaneWeights(w, WeightsFor::Adjoint, scratch);
  const auto group = highwayKernel(&N_AVX3::laneBackwardDataGroup, &N_AVX2::laneBackwardDataGroup);
  const int64_t perThread = wholeCacheLines(p.adjointThreadFloats());
  parallelForOnThreads(p.groups(), [&](int64_t g, int thread) {
    const int64_t first = g * p.lanes, count = std::min(p.lanes, p.images - first);
    group(dy.data() + first * p.outImage(), scratch, dx.data() + first * p.inImage(), count, p,
          scratch + wholeCacheLines(p.weightFloats()) + thread * perThread);
  });
#else
  (void)p, (void)dy, (void)w, (void)dx, (void)scratch;
#endif
}

}  // namespace winograd

}  // namespace dl4cpp::cpu
#endif  // HWY_ONCE
