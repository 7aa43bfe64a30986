// The Winograd kernels' plans and weight transforms (WinogradPlan.h): what every level and every
// pass shares, compiled once.
#include "nn/backend/cpu/winograd/WinogradPlan.h"

#include <algorithm>
#include <string>

#include "nn/backend/cpu/CpuIsa.h"
#include "nn/backend/cpu/winograd/WinogradConvolution.h"
#include "nn/core/Error.h"

namespace dl4cpp::cpu::winograd {
namespace {

Plan planFor(const Shape& in, int64_t outChannels, int64_t outH, int64_t outW, int64_t padTop,
             int64_t padLeft, int64_t targetTiles, bool wholeImages = false) {
  Plan p{};
  const int64_t tile = p.tile();
  p.images = in[0];
  p.inChannels = in[1];
  p.inH = in[2];
  p.inW = in[3];
  p.outChannels = outChannels;
  p.outH = outH;
  p.outW = outW;
  p.padTop = padTop;
  p.padLeft = padLeft;
  p.tilesH = (outH + tile - 1) / tile;
  p.tilesW = (outW + tile - 1) / tile;
  p.tileRowsPerItem = std::clamp<int64_t>(targetTiles / std::max<int64_t>(p.tilesW, 1), 1,
                                          std::max<int64_t>(p.tilesH, 1));
  p.itemsPerImage = (p.tilesH + p.tileRowsPerItem - 1) / p.tileRowsPerItem;
  p.imagesPerItem = 1;
  if (wholeImages && p.itemsPerImage == 1)
    p.imagesPerItem = std::clamp<int64_t>(targetTiles / std::max<int64_t>(p.tilesH * p.tilesW, 1),
                                          1, std::max<int64_t>(p.images, 1));
  p.tileStride = roundUp(p.imagesPerItem * p.tileRowsPerItem * p.tilesW, kMaxLanes) + kMaxLanes;
  // A row's patch columns are loaded as interleaved groups of `tile` vectors: the last vector's
  // groups reach tile kMaxLanes floats past its first column, plus the patch's columns beyond the
  // tile rounded up to a group (in whole vectors, so that rows are zeroed a vector at a time).
  p.paddedW =
      roundUp(std::max(tile * roundUp(p.tilesW, kMaxLanes) + roundUp(p.patch() - tile, tile),
                       p.padLeft + roundUp(p.inW, kMaxLanes)),
              kMaxLanes);
  return p;
}

// G, the weight transform: U = G g Gᵀ, and the weight gradient dW = Gᵀ dU G. F(4x4, 3x3), on the
// points 0, 1, -1, 2, -2 and ∞ (row i of a finite point q: q^j / Π over the other points
// (q - point)).
constexpr float kG43[6][3] = {{1.0f / 4, 0, 0},
                              {-1.0f / 6, -1.0f / 6, -1.0f / 6},
                              {-1.0f / 6, 1.0f / 6, -1.0f / 6},
                              {1.0f / 24, 2.0f / 24, 4.0f / 24},
                              {1.0f / 24, -2.0f / 24, 4.0f / 24},
                              {0, 0, 1}};
// F(4x4, 5x5), on the points 0, 1, -1, 2, -2, 1/2, -1/2 and ∞ (the row of 0 negated, as its input
// transform's row is: WinogradImageLanes.cpp).
constexpr float kG45[8][5] = {{1, 0, 0, 0, 0},
                              {-2.0f / 9, -2.0f / 9, -2.0f / 9, -2.0f / 9, -2.0f / 9},
                              {-2.0f / 9, 2.0f / 9, -2.0f / 9, 2.0f / 9, -2.0f / 9},
                              {1.0f / 90, 1.0f / 45, 2.0f / 45, 4.0f / 45, 8.0f / 45},
                              {1.0f / 90, -1.0f / 45, 2.0f / 45, -4.0f / 45, 8.0f / 45},
                              {32.0f / 45, 16.0f / 45, 8.0f / 45, 4.0f / 45, 2.0f / 45},
                              {32.0f / 45, -16.0f / 45, 8.0f / 45, -4.0f / 45, 2.0f / 45},
                              {0, 0, 0, 0, 1}};

// dW[o][c] = Gᵀ dU G, dU of the plane (o, c) at du[position * positionStride + o * outStride +
// c * inStride].
template <int K, int P>
void weightsFromTransformedWith(const float (&G)[P][K], const float* du, int64_t positionStride,
                                int64_t outStride, int64_t inStride, Tensor& dw) {
  constexpr int64_t k = K, patch = P;
  const int64_t outs = dw.dim(0), ins = dw.dim(1);
  float* grad = dw.data();
  for (int64_t o = 0; o < outs; ++o)
    for (int64_t c = 0; c < ins; ++c) {
      float ug[P][K] = {};  // dU G
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

template <int K, int P>
void transformWeightsWith(const float (&G)[P][K], const Tensor& w, WeightsFor pass, float* u) {
  constexpr int64_t k = K, patch = P;
  const bool swapped = pass != WeightsFor::Forward;
  const bool turned = pass == WeightsFor::ForwardOverGradient;
  const int64_t outs = swapped ? w.dim(1) : w.dim(0);
  const int64_t ins = swapped ? w.dim(0) : w.dim(1);
  if (w.numel() == 0) return;  // no channels: nothing to transform (and no storage to read)
  const float* weights = w.data();
  for (int64_t o = 0; o < outs; ++o)
    for (int64_t c = 0; c < ins; ++c) {
      const float* plane = weights + (swapped ? c * outs + o : o * ins + c) * k * k;
      const auto g = [&](int64_t i, int64_t j) {
        return turned ? plane[(k - 1 - i) * k + (k - 1 - j)] : plane[i * k + j];
      };
      float gg[P][K] = {};  // G g
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

}  // namespace

Plan forwardPlan(const Shape& x, const Shape& w, const WindowGeometry& g) {
  return planFor(x, w[0], g.outH(x[2]), g.outW(x[3]), g.padTop, g.padLeft, kTargetTilesPerItem3x3);
}

Plan backwardDataPlan(const Shape& dx, const Shape& w, const WindowGeometry& g) {
  const Shape dy{dx[0], w[0], g.outH(dx[2]), g.outW(dx[3])};
  return planFor(dy, w[1], dx[2], dx[3], g.kernelH - 1 - g.padTop, g.kernelW - 1 - g.padLeft,
                 kTargetTilesPerItem3x3);
}

Plan gradientPlan(const Shape& x, const Shape& dw, const WindowGeometry& g) {
  return planFor(x, dw[0], g.outH(x[2]), g.outW(x[3]), g.padTop, g.padLeft,
                 kTargetGradientTilesPerItem3x3, true);
}

void weightsFromTransformed(const float* du, const Plan& p, Tensor& dw) {
  weightsFromTransformedWith(kG43, du, p.outChannels * p.inChannels, p.inChannels, 1, dw);
}

void transformWeights(const Tensor& w, WeightsFor pass, float* u) {
  transformWeightsWith(kG43, w, pass, u);
}

void laneWeightsFromTransformed(const float* du, const LanePlan& p, Tensor& dw) {
  weightsFromTransformedWith(kG45, du, p.inChannels * p.paddedOutChannels(), 1,
                             p.paddedOutChannels(), dw);
}

void transformLaneWeights(const Tensor& w, WeightsFor pass, float* u) {
  transformWeightsWith(kG45, w, pass, u);
}

LanePlan lanePlan(const Shape& x, const Shape& w, const WindowGeometry& g) {
  LanePlan p{};
  p.lanes = cpuIsa() >= CpuIsa::Avx512 ? 16 : 8;
  p.images = x[0];
  p.inChannels = x[1];
  p.inH = x[2];
  p.inW = x[3];
  p.outChannels = w[0];
  p.outH = g.outH(x[2]);
  p.outW = g.outW(x[3]);
  p.padTop = g.padTop;
  p.padLeft = g.padLeft;
  p.tilesH = (p.outH + kLaneTile - 1) / kLaneTile;
  p.tilesW = (p.outW + kLaneTile - 1) / kLaneTile;
  p.tilesPerChunk = std::min(kLaneTilesPerChunk, std::max<int64_t>(p.tilesW, 1));
  return p;
}

void checkSupported(const WindowGeometry& g, const Shape& w, const char* pass) {
  if (!winogradConvolutionSupported(g) || w.rank() != 4 || w[2] != g.kernelH || w[3] != g.kernelW)
    throw BackendError(std::string("Winograd convolution ") + pass +
                       ": needs AVX2 or AVX-512 and a 3x3 or 5x5 kernel at stride 1 without "
                       "dilation, each padding below the kernel size");
}

}  // namespace dl4cpp::cpu::winograd
