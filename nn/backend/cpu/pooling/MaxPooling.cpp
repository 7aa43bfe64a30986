// Highway compiles this file once per x86 level (HighwayTargets.h) for the 2x2 kernels,
// written once for vectors of kLanes floats (16 at avx512, 8 at avx2); the rest is compiled once
// (HWY_ONCE).
#include "nn/backend/cpu/HighwayTargets.h"

#ifdef DL4CPP_X86_KERNELS
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "nn/backend/cpu/pooling/MaxPooling.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#endif

#include <algorithm>
#include <bit>
#include <limits>

#include "nn/backend/cpu/ParallelFor.h"
#include "nn/backend/cpu/pooling/MaxPooling.h"

#ifdef DL4CPP_X86_KERNELS
HWY_BEFORE_NAMESPACE();
namespace dl4cpp::cpu::HWY_NAMESPACE {
#if DL4CPP_HWY_KERNEL_TARGET
namespace {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;
using DI = hn::RebindToSigned<D>;
constexpr int64_t kLanes = HWY_LANES(float);
constexpr int64_t kOutputs = kLanes / 2;  // outputs per vector: two pixels of each window row
constexpr bool kMaskedRuns = HWY_TARGET == HWY_AVX3;

// Lane j of a vector is pixel j of a window row's run: output j / 2's window, column j % 2.
class WindowLanes {
 public:
  WindowLanes() {
    int32_t output[kLanes], column[kLanes];
    for (int64_t j = 0; j < kLanes; ++j) {
      output[j] = static_cast<int32_t>(j / 2);
      column[j] = static_cast<int32_t>(j % 2);
    }
    pairs_ = hn::SetTableIndices(D(), output);
    pairInts_ = hn::SetTableIndices(DI(), output);
    top_ = hn::LoadU(DI(), column);
    bottom_ = hn::Add(top_, hn::Set(DI(), 2));
  }

  // kOutputs outputs' dy and arg-max, or (kPartial) the first n of them, into the top and bottom
  // rows' 2 kOutputs pixels (or 2n): each dy and arg-max is repeated for its window's two
  // columns, and a pixel keeps its dy where the arg-max names its (row, column).
  template <bool kPartial>
  HWY_INLINE void scatter(const float* dy, const uint8_t* argmax, int64_t n, float* top,
                          float* bottom) const {
    const D d;
    const hn::Half<D> half;
    const hn::Half<DI> halfInts;
    const hn::Rebind<uint8_t, hn::Half<DI>> bytes;
    hn::Vec<hn::Half<D>> dyHalf;
    hn::Vec<hn::Half<DI>> argmaxHalf;
    if constexpr (kPartial) {  // nothing read past the row
      dyHalf = hn::MaskedLoad(hn::FirstN(half, static_cast<size_t>(n)), half, dy);
#if HWY_TARGET == HWY_AVX3
      argmaxHalf = hn::PromoteTo(
          halfInts, hn::MaskedLoad(hn::FirstN(bytes, static_cast<size_t>(n)), bytes, argmax));
#else  // AVX2 has no masked byte load (Highway's loads the whole vector, then blends)
      uint8_t first[kOutputs] = {};
      for (int64_t k = 0; k < n; ++k) first[k] = argmax[k];
      argmaxHalf = hn::PromoteTo(halfInts, hn::LoadU(bytes, first));
#endif
    } else {
      dyHalf = hn::LoadU(half, dy);
      argmaxHalf = hn::PromoteTo(halfInts, hn::LoadU(bytes, argmax));
    }
    const auto values = hn::TableLookupLanes(hn::ZeroExtendVector(d, dyHalf), pairs_);
    const auto at = hn::TableLookupLanes(hn::ZeroExtendVector(DI(), argmaxHalf), pairInts_);
    const auto t = hn::IfThenElseZero(hn::RebindMask(d, hn::Eq(at, top_)), values);
    const auto b = hn::IfThenElseZero(hn::RebindMask(d, hn::Eq(at, bottom_)), values);
    if constexpr (kPartial) {
      const auto pixels = hn::FirstN(d, static_cast<size_t>(2 * n));
      hn::BlendedStore(t, pixels, d, top);
      hn::BlendedStore(b, pixels, d, bottom);
    } else {
      hn::StoreU(t, d, top);
      hn::StoreU(b, d, bottom);
    }
  }

 private:
  using FloatIndices = decltype(hn::SetTableIndices(D(), static_cast<const int32_t*>(nullptr)));
  using IntIndices = decltype(hn::SetTableIndices(DI(), static_cast<const int32_t*>(nullptr)));
  FloatIndices pairs_;
  IntIndices pairInts_;
  hn::Vec<DI> top_, bottom_;
};

// Backward of one plane, 2x2 windows of stride 2, kOutputs outputs per step. Same bits as the
// scalar loop.
void backwardPlane2x2(const float* dy, const uint8_t* argmax, float* dx, int64_t inW, int64_t outH,
                      int64_t outW) {
  const WindowLanes lanes;
  const int64_t full = outW / kOutputs * kOutputs;
  for (int64_t oh = 0; oh < outH; ++oh) {
    float* top = dx + 2 * oh * inW;
    float* bottom = top + inW;
    const float* dyRow = dy + oh * outW;
    const uint8_t* argmaxRow = argmax + oh * outW;
    for (int64_t ow = 0; ow < full; ow += kOutputs)
      lanes.scatter<false>(dyRow + ow, argmaxRow + ow, kOutputs, top + 2 * ow, bottom + 2 * ow);
    if (full < outW)
      lanes.scatter<true>(dyRow + full, argmaxRow + full, outW - full, top + 2 * full,
                          bottom + 2 * full);
  }
}

// The running maximum of vectors of 2x2 windows, given as their four pixels (top-left,
// top-right, bottom-left, bottom-right) in window order: the scalar loop's rule (RunningMax: a
// strictly greater value replaces it) on whole vectors, so ties and NaN go as they go there.
template <class DV>
HWY_INLINE void windowMaximum(DV d, const hn::Vec<DV> (&window)[4], hn::Vec<DV>& best,
                              hn::Vec<hn::RebindToSigned<DV>>& at) {
  const hn::RebindToSigned<DV> di;
  best = hn::Set(d, std::numeric_limits<float>::lowest());
  at = hn::Zero(di);
  for (int32_t position = 0; position < 4; ++position) {
    const auto wins = hn::Gt(window[position], best);
    best = hn::IfThenElse(wins, window[position], best);
    at = hn::IfThenElse(hn::RebindMask(di, wins), hn::Set(di, position), at);
  }
}

// kLanes outputs from their windows' top and bottom rows, 2 kLanes pixels each, or (kPartial)
// the first n < kLanes of them, reading and writing nothing past the row: each row's even and odd
// pixels are split into a vector each.
template <bool kPartial>
HWY_INLINE void poolRun(const float* top, const float* bottom, int64_t n, float* y,
                        uint8_t* argmax) {
  const D d;
  const hn::Rebind<uint8_t, DI> bytes;
  hn::Vec<D> top0, top1, bottom0, bottom1;
  if constexpr (kPartial) {
    const int64_t pixels = 2 * n;
    const auto first = hn::FirstN(d, static_cast<size_t>(std::min(pixels, kLanes)));
    const auto second = hn::FirstN(d, static_cast<size_t>(std::max<int64_t>(pixels - kLanes, 0)));
    top0 = hn::MaskedLoad(first, d, top), top1 = hn::MaskedLoad(second, d, top + kLanes);
    bottom0 = hn::MaskedLoad(first, d, bottom);
    bottom1 = hn::MaskedLoad(second, d, bottom + kLanes);
  } else {
    (void)n;
    top0 = hn::LoadU(d, top), top1 = hn::LoadU(d, top + kLanes);
    bottom0 = hn::LoadU(d, bottom), bottom1 = hn::LoadU(d, bottom + kLanes);
  }
  const hn::Vec<D> window[4] = {hn::ConcatEven(d, top1, top0), hn::ConcatOdd(d, top1, top0),
                                hn::ConcatEven(d, bottom1, bottom0),
                                hn::ConcatOdd(d, bottom1, bottom0)};
  hn::Vec<D> best;
  hn::Vec<DI> at;
  windowMaximum(d, window, best, at);
  if constexpr (kPartial) {
    hn::BlendedStore(best, hn::FirstN(d, static_cast<size_t>(n)), d, y);
    if (argmax)
      hn::BlendedStore(hn::DemoteTo(bytes, at), hn::FirstN(bytes, static_cast<size_t>(n)), bytes,
                       argmax);
  } else {
    hn::StoreU(best, d, y);
    if (argmax) hn::StoreU(hn::DemoteTo(bytes, at), bytes, argmax);
  }
}

// kLanes / 2 outputs from one vector of each window row (LeNet's 12-wide rows end with one), or
// (kPartial) the first n < kLanes / 2 of them, reading nothing past the row.
template <bool kPartial>
HWY_INLINE void poolHalfRun(const float* top, const float* bottom, int64_t n, float* y,
                            uint8_t* argmax) {
  const D d;
  const hn::Half<D> half;
  hn::Vec<D> topRow, bottomRow;
  if constexpr (kPartial) {
    const auto pixels = hn::FirstN(d, static_cast<size_t>(2 * n));
    topRow = hn::MaskedLoad(pixels, d, top);
    bottomRow = hn::MaskedLoad(pixels, d, bottom);
  } else {
    topRow = hn::LoadU(d, top);
    bottomRow = hn::LoadU(d, bottom);
  }
  const auto topLow = hn::LowerHalf(half, topRow), topHigh = hn::UpperHalf(half, topRow);
  const auto bottomLow = hn::LowerHalf(half, bottomRow);
  const auto bottomHigh = hn::UpperHalf(half, bottomRow);
  const hn::Vec<hn::Half<D>> window[4] = {
      hn::ConcatEven(half, topHigh, topLow), hn::ConcatOdd(half, topHigh, topLow),
      hn::ConcatEven(half, bottomHigh, bottomLow), hn::ConcatOdd(half, bottomHigh, bottomLow)};
  hn::Vec<hn::Half<D>> best;
  hn::Vec<hn::Half<DI>> at;
  windowMaximum(half, window, best, at);
  const hn::Rebind<uint8_t, hn::Half<DI>> bytes;
  if constexpr (kPartial) {  // through buffers: AVX2's masked stores are slow
    float values[kLanes / 2];
    hn::StoreU(best, half, values);
    std::copy_n(values, n, y);
    if (argmax) {
      uint8_t positions[kLanes / 2];
      hn::StoreU(hn::DemoteTo(bytes, at), bytes, positions);
      std::copy_n(positions, n, argmax);
    }
  } else {
    hn::StoreU(best, half, y);
    if (argmax) hn::StoreU(hn::DemoteTo(bytes, at), bytes, argmax);
  }
}

// Forward of one plane, 2x2 windows of stride 2: kLanes outputs per step, then the rest of the
// row in one masked run (AVX-512, whose masked loads and stores cost what plain ones do), or
// half a vector and then the rest (AVX2, whose masked stores are slow). Same bits as the scalar
// loop.
void forwardPlane2x2(const float* x, float* y, uint8_t* argmax, int64_t inW, int64_t outH,
                     int64_t outW) {
  constexpr int64_t kHalf = kLanes / 2;
  for (int64_t oh = 0; oh < outH; ++oh) {
    const float* top = x + 2 * oh * inW;
    const float* bottom = top + inW;
    float* yRow = y + oh * outW;
    uint8_t* argmaxRow = argmax ? argmax + oh * outW : nullptr;
    const auto at = [&](int64_t ow) { return argmaxRow ? argmaxRow + ow : nullptr; };
    int64_t ow = 0;
    for (; ow + kLanes <= outW; ow += kLanes)
      poolRun<false>(top + 2 * ow, bottom + 2 * ow, kLanes, yRow + ow, at(ow));
    if constexpr (kMaskedRuns) {
      if (ow < outW) poolRun<true>(top + 2 * ow, bottom + 2 * ow, outW - ow, yRow + ow, at(ow));
    } else {
      if (ow + kHalf <= outW) {
        poolHalfRun<false>(top + 2 * ow, bottom + 2 * ow, kHalf, yRow + ow, at(ow));
        ow += kHalf;
      }
      if (ow < outW) poolHalfRun<true>(top + 2 * ow, bottom + 2 * ow, outW - ow, yRow + ow, at(ow));
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

namespace {

// The running maximum starts at the lowest float and only a strictly greater value replaces it,
// as in oneDNN. The choice is made with bit masks, not branches: which window position holds the
// maximum follows the data, and branching on it mispredicts about every other output.
struct RunningMax {
  float best = std::numeric_limits<float>::lowest();
  uint32_t at = 0;
  void offer(float v, uint32_t position) {
    const uint32_t take = 0u - static_cast<uint32_t>(v > best);  // all ones when v wins
    best = std::bit_cast<float>((std::bit_cast<uint32_t>(v) & take) |
                                (std::bit_cast<uint32_t>(best) & ~take));
    at = (position & take) | (at & ~take);
  }
};

// One (n, c) plane, any window without padding.
void forwardPlane(const float* x, float* y, uint8_t* argmax, int64_t inW, int64_t outH,
                  int64_t outW, const WindowGeometry& g) {
  for (int64_t oh = 0; oh < outH; ++oh)
    for (int64_t ow = 0; ow < outW; ++ow) {
      const float* window = x + oh * g.strideH * inW + ow * g.strideW;
      RunningMax m;
      for (int64_t i = 0; i < g.kernelH; ++i)
        for (int64_t j = 0; j < g.kernelW; ++j)
          m.offer(window[i * inW + j], static_cast<uint32_t>(i * g.kernelW + j));
      y[oh * outW + ow] = m.best;
      if (argmax) argmax[oh * outW + ow] = static_cast<uint8_t>(m.at);
    }
}

// One plane, 2x2 windows of stride 2 (LeNet's). The same rule as RunningMax, written as
// float and integer selects over a chunk of outputs so that the compiler vectorises the loop;
// the arg-max bytes are stored by a second, narrowing loop.
void forwardPlane2x2(const float* x, float* y, uint8_t* argmax, int64_t inW, int64_t outH,
                     int64_t outW) {
  constexpr int64_t kChunk = 64;
  for (int64_t oh = 0; oh < outH; ++oh) {
    const float* top = x + 2 * oh * inW;
    const float* bottom = top + inW;
    for (int64_t begin = 0; begin < outW; begin += kChunk) {
      const int64_t n = std::min(kChunk, outW - begin);
      const float* t = top + 2 * begin;
      const float* b = bottom + 2 * begin;
      float* yc = y + oh * outW + begin;
      uint32_t at[kChunk];
      for (int64_t k = 0; k < n; ++k) {
        float best = std::numeric_limits<float>::lowest();
        uint32_t where = 0;
        const float v0 = t[2 * k], v1 = t[2 * k + 1], v2 = b[2 * k], v3 = b[2 * k + 1];
        where = v0 > best ? 0u : where;
        best = v0 > best ? v0 : best;
        where = v1 > best ? 1u : where;
        best = v1 > best ? v1 : best;
        where = v2 > best ? 2u : where;
        best = v2 > best ? v2 : best;
        where = v3 > best ? 3u : where;
        best = v3 > best ? v3 : best;
        yc[k] = best;
        at[k] = where;
      }
      if (argmax)
        for (int64_t k = 0; k < n; ++k) argmax[oh * outW + begin + k] = static_cast<uint8_t>(at[k]);
    }
  }
}

// Backward of one plane, 2x2 windows of stride 2: the windows tile the input, so every dx element
// under a window is written once, zero or its window's dy. Masks, not branches (see RunningMax).
void backwardPlane2x2(const float* dy, const uint8_t* argmax, float* dx, int64_t inW, int64_t outH,
                      int64_t outW) {
  for (int64_t oh = 0; oh < outH; ++oh) {
    float* top = dx + 2 * oh * inW;
    float* bottom = top + inW;
    for (int64_t ow = 0; ow < outW; ++ow) {
      const uint32_t d = std::bit_cast<uint32_t>(dy[oh * outW + ow]);
      const uint32_t at = argmax[oh * outW + ow];
      top[2 * ow] = std::bit_cast<float>(d & (0u - static_cast<uint32_t>(at == 0)));
      top[2 * ow + 1] = std::bit_cast<float>(d & (0u - static_cast<uint32_t>(at == 1)));
      bottom[2 * ow] = std::bit_cast<float>(d & (0u - static_cast<uint32_t>(at == 2)));
      bottom[2 * ow + 1] = std::bit_cast<float>(d & (0u - static_cast<uint32_t>(at == 3)));
    }
  }
}

bool isTwoByTwoStrideTwo(const WindowGeometry& g) {
  return g.kernelH == 2 && g.kernelW == 2 && g.strideH == 2 && g.strideW == 2;
}

}  // namespace

bool directMaxPoolingApplies(const WindowGeometry& g) {
  return g.padTop == 0 && g.padLeft == 0 && g.padBottom == 0 && g.padRight == 0 &&
         g.dilationH == 1 && g.dilationW == 1 && g.kernelH * g.kernelW <= 256;
}

int64_t maxPoolingWorkspaceFloats(const Shape& y) {
  return (y.numel() + static_cast<int64_t>(sizeof(float)) - 1) /
         static_cast<int64_t>(sizeof(float));
}

void maxPoolingForwardPlanes(const float* x, float* y, uint8_t* argmax, int64_t planes,
                             const PlaneExtents& e, const WindowGeometry& g,
                             [[maybe_unused]] bool allowVectors) {
  const bool twoByTwo = isTwoByTwoStrideTwo(g);
  auto* forward2x2 = &forwardPlane2x2;
#ifdef DL4CPP_X86_KERNELS
  if (allowVectors && cpuIsa() >= CpuIsa::Avx2)
    forward2x2 = highwayKernel(&N_AVX3::forwardPlane2x2, &N_AVX2::forwardPlane2x2);
#endif
  for (int64_t p = 0; p < planes; ++p) {
    const float* xp = x + p * e.inH * e.inW;
    float* yp = y + p * e.outH * e.outW;
    uint8_t* ap = argmax ? argmax + p * e.outH * e.outW : nullptr;
    if (twoByTwo)
      forward2x2(xp, yp, ap, e.inW, e.outH, e.outW);
    else
      forwardPlane(xp, yp, ap, e.inW, e.outH, e.outW, g);
  }
}

void maxPoolingBackwardPlanes(const float* dy, float* dx, const uint8_t* argmax, int64_t planes,
                              const PlaneExtents& e, const WindowGeometry& g,
                              [[maybe_unused]] bool allowVectors) {
  const int64_t inH = e.inH, inW = e.inW, outH = e.outH, outW = e.outW;
  const bool twoByTwo = isTwoByTwoStrideTwo(g);
  auto* backward2x2 = &backwardPlane2x2;
#ifdef DL4CPP_X86_KERNELS
  if (allowVectors && cpuIsa() >= CpuIsa::Avx2)
    backward2x2 = highwayKernel(&N_AVX3::backwardPlane2x2, &N_AVX2::backwardPlane2x2);
#endif
  for (int64_t p = 0; p < planes; ++p) {
    float* dxp = dx + p * inH * inW;
    const float* dyp = dy + p * outH * outW;
    const uint8_t* ap = argmax + p * outH * outW;
    if (twoByTwo) {
      backward2x2(dyp, ap, dxp, inW, outH, outW);
      // An odd input extent leaves a last row / column that no window covers.
      for (int64_t h = 2 * outH; h < inH; ++h) std::fill(dxp + h * inW, dxp + (h + 1) * inW, 0.0f);
      if (inW > 2 * outW)
        for (int64_t h = 0; h < 2 * outH; ++h)
          std::fill(dxp + h * inW + 2 * outW, dxp + (h + 1) * inW, 0.0f);
      continue;
    }
    // Overlapping windows (stride < kernel) add up within the plane.
    std::fill(dxp, dxp + inH * inW, 0.0f);
    for (int64_t oh = 0; oh < outH; ++oh)
      for (int64_t ow = 0; ow < outW; ++ow) {
        const int64_t at = ap[oh * outW + ow];
        const int64_t h = oh * g.strideH + at / g.kernelW, w = ow * g.strideW + at % g.kernelW;
        dxp[h * inW + w] += dyp[oh * outW + ow];
      }
  }
}

void maxPoolingForward(const Tensor& x, Tensor& y, const WindowGeometry& g, uint8_t* argmax,
                       bool allowVectors) {
  const PlaneExtents e{x.dim(2), x.dim(3), y.dim(2), y.dim(3)};
  const int64_t outPlane = e.outH * e.outW;
  const float* xs = x.data();
  float* ys = y.data();
  parallelFor(x.dim(0) * x.dim(1), [&](int64_t p) {
    maxPoolingForwardPlanes(xs + p * e.inH * e.inW, ys + p * outPlane,
                            argmax ? argmax + p * outPlane : nullptr, 1, e, g, allowVectors);
  });
}

void maxPoolingBackward(const Tensor& dy, Tensor& dx, const WindowGeometry& g,
                        const uint8_t* argmax, bool allowVectors) {
  const PlaneExtents e{dx.dim(2), dx.dim(3), dy.dim(2), dy.dim(3)};
  const int64_t outPlane = e.outH * e.outW;
  const float* dys = dy.data();
  float* dxs = dx.data();
  // Planes are independent, so overlapping windows add without races.
  parallelFor(dx.dim(0) * dx.dim(1), [&](int64_t p) {
    maxPoolingBackwardPlanes(dys + p * outPlane, dxs + p * e.inH * e.inW, argmax + p * outPlane, 1,
                             e, g, allowVectors);
  });
}

}  // namespace dl4cpp::cpu
#endif  // HWY_ONCE
