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
#include <cstring>
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
// 12 x 1. Fewer than 12 sums do not hide the FMAs' latency.
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
// channel, into transformed[position * channelStride + tile] (tile = row · tilesW + column).
// A row's last vector may run past tilesW: the next row's vectors, stored after it, overwrite
// those lanes, and the item's last row runs into the slack of tileStride.
void transformInputChannel(const float* padded, int64_t tileRows, const Plan& p, float* out,
                           int64_t channelStride) {
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
        for (int i = 0; i < 4; ++i) hn::StoreU(v[i], d, dst + (i * 4 + j) * channelStride);
      }
    }
}

// The item's input rows of one channel into padded rows at column padLeft: whole vectors, the last
// one loaded under a mask and stored whole (its zeros land in the padding, which has room). Only
// rows inside the input are written; everything else stays as transformInput zeroed it.
void padChannel(const float* plane, int64_t firstRow, int64_t first, int64_t last, const Plan& p,
                float* padded) {
  const D d;
  for (int64_t r = first; r < last; ++r) {
    const float* src = plane + (firstRow + r) * p.inW;
    float* dst = padded + r * p.paddedW + p.padLeft;
    for (int64_t j = 0; j < p.inW; j += kLanes) {
      const auto lanes = hn::FirstN(d, static_cast<size_t>(p.inW - j));
      hn::StoreU(hn::MaskedLoad(lanes, d, src + j), d, dst + j);
    }
  }
}

// Channel by channel: its padded rows, then its tiles' transforms. The rows go to two alternating
// slots, the next channel's written while this one's are transformed: a load right behind the
// stores it overlaps would wait for them (no store-to-load forwarding across unaligned vectors).
void transformInput(const float* image, int64_t firstTileRow, int64_t tileRows, const Plan& p,
                    const ItemScratch& s) {
  const D d;
  const int64_t rows = 2 * tileRows + 2, firstRow = 2 * firstTileRow - p.padTop;
  const int64_t slot = p.paddedRows() * p.paddedW, plane = p.inH * p.inW;
  for (int64_t i = 0; i < 2 * slot; i += kLanes) hn::StoreU(hn::Zero(d), d, s.padded + i);
  const int64_t first = std::max<int64_t>(0, -firstRow);
  const int64_t last = std::min<int64_t>(rows, p.inH - firstRow);
  padChannel(image, firstRow, first, last, p, s.padded);
  for (int64_t c = 0; c < p.inChannels; ++c) {
    const float* padded = s.padded + (c % 2) * slot;
    if (c + 1 < p.inChannels)
      padChannel(image + (c + 1) * plane, firstRow, first, last, p,
                 s.padded + ((c + 1) % 2) * slot);
    transformInputChannel(padded, tileRows, p, s.transformed + c * p.tileStride,
                          p.inChannels * p.tileStride);
  }
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

void runItem(const float* in, const float* weights, const float* bias, float* out,
             int64_t firstTileRow, const Plan& p, float* scratch) {
  const int64_t padded = 2 * p.paddedRows() * p.paddedW;
  const ItemScratch s{scratch, scratch + padded, scratch + padded + p.transformedFloats()};
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

Plan planFor(const Shape& in, int64_t outChannels, int64_t outH, int64_t outW, int64_t padTop,
             int64_t padLeft) {
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
  p.tileRowsPerItem = std::clamp<int64_t>(kTargetTilesPerItem / std::max<int64_t>(p.tilesW, 1), 1,
                                          std::max<int64_t>(p.tilesH, 1));
  p.itemsPerImage = (p.tilesH + p.tileRowsPerItem - 1) / p.tileRowsPerItem;
  p.tileStride = roundUp(p.tileRowsPerItem * p.tilesW, kMaxLanes) + kMaxLanes;
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

// U = G g Gᵀ of every weight plane, into u[position][in][out]: g = w[out][in] (forward), or
// (backwardData) w[in][out] turned by 180 degrees.
void transformWeights(const Tensor& w, bool backwardData, float* u) {
  static constexpr float kG[4][3] = {{1, 0, 0}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0, 0, 1}};
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

void winogradConvolutionBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx,
                                     const WindowGeometry& g, float* scratch) {
  winograd::checkSupported(g, w.shape(), "backward data");
  const winograd::Plan p = winograd::backwardDataPlan(dx.shape(), w.shape(), g);
  winograd::transformWeights(w, true, scratch);
  winograd::run(p, dy.data(), nullptr, dx.data(), scratch);
}

}  // namespace dl4cpp::cpu
#endif  // HWY_ONCE
