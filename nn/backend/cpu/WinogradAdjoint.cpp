// Winograd backward data at 5x5 as the forward pass's adjoint, on the forward pass's tiles
// (WinogradConvolution.h says why; winograd::runAdjoint in WinogradPlan.h). Highway compiles this
// file once per x86 level (HighwayTargets.h).
#include <dl4cpp/nn/backend/cpu/HighwayTargets.h>

#ifdef DL4CPP_X86_KERNELS
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "dl4cpp/nn/backend/cpu/WinogradAdjoint.cpp"
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

// --- Backward data with flat tiles (5x5): the forward pass's adjoint. dM = A dY Aᵀ of each tile
// of dy, dV[position][c][t] = Σ_o U[position][c][o] · dM[position][o][t] (the forward pass's
// weights, transposed), then each tile's input gradient B dV Bᵀ, a patch added into dx where the
// tile's input patch lies. It has the forward pass's tiles and products (16 tiles for LeNet's 8x8
// dy) where backward data as a forward pass over dy padded by kernel - 1 has a tile per 2x2 of dx
// (36).

// Bᵀ transposed (of F(2, 5)), applied to 6 values: out[row] = Σ_i Bᵀ[i][row] v[i]: 4 v0,
// 4 (v2 - v1) + 2 (v4 - v3) + 4 v5, -5 v0 - 4 (v1 + v2) - (v3 + v4), (v1 - v2) + 2 (v3 - v4) - 5
// v5, v0 + v1 + v2 + v3 + v4, v5.
template <int kKernel>
HWY_INLINE void inputTransformTransposed(const V (&v)[kPatch], V (&out)[kPatch]) {
  static_assert(kKernel == 5, "backward data as the adjoint runs 5x5 only (flat tiles)");
  const D d;
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

// One output channel's dy rows of an item (zero-padded), into dM = A dY Aᵀ at
// out[position * positionStride + tile], flat: A along each row first, into plane (patch column j,
// row parity) of `rows` at the tile's own index, then A down each tile's two rows, whole vectors
// of consecutive tiles.
template <int kKernel>
void transformGradientChannelFlat(const float* padded, int64_t tileRows, const Plan& p, float* rows,
                                  float* out, int64_t positionStride) {
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
                                                      p.transformedPositionStride());
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
    transformInputGradientChannel<kKernel>(s.products + c * p.tileStride, p.productPositionStride(),
                                           tileRows, p, patchRows, s.rowTransforms, acc);
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

// Images in parallel; an image's items one after the other, since their patches overlap in dx.
void runAdjoint(const Plan& p, const Tensor& dy, const Tensor& w, Tensor& dx, float* scratch) {
#ifdef DL4CPP_X86_KERNELS
  transformWeights(w, WeightsFor::Adjoint, scratch);
  const auto item = highwayKernel(&N_AVX3::backwardDataItem<5>, &N_AVX2::backwardDataItem<5>);
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

}  // namespace winograd

}  // namespace dl4cpp::cpu
#endif  // HWY_ONCE
