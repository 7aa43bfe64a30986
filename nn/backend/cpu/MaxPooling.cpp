#include <dl4cpp/nn/backend/cpu/CpuIsa.h>
#include <dl4cpp/nn/backend/cpu/MaxPooling.h>
#include <dl4cpp/nn/backend/cpu/ParallelFor.h>
#include <dl4cpp/nn/backend/cpu/X86Kernels.h>

#include <algorithm>
#include <bit>
#include <limits>

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

#ifdef DL4CPP_X86_KERNELS
// Lanes 0-7. (This and the maskz forms below: GCC 12's plain ones read an undefined register and
// warn.)
__attribute__((target("avx512f,avx512bw,avx512vl"))) inline __m256 lowHalf(__m512 v) {
  return _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, _mm512_castps_pd(v), 0));
}

// The same, 8 outputs (16 pixels of the top and of the bottom row) per step: each dy and arg-max
// is repeated for its window's two columns, and a lane keeps its dy where the arg-max names its
// (row, column). Rows of 16 and 8 pixels (LeNet's 24 and 8) take full-width stores only. Same
// bits as the scalar loop.
__attribute__((target("avx512f,avx512bw,avx512vl"))) void backwardPlane2x2Avx512(
    const float* dy, const uint8_t* argmax, float* dx, int64_t inW, int64_t outH, int64_t outW) {
  constexpr __mmask16 kAll = 0xFFFF;
  const __m512i pairs = _mm512_set_epi32(7, 7, 6, 6, 5, 5, 4, 4, 3, 3, 2, 2, 1, 1, 0, 0);
  const __m512i topColumn = _mm512_set_epi32(1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0);
  const __m512i bottomColumn = _mm512_add_epi32(topColumn, _mm512_set1_epi32(2));
  for (int64_t oh = 0; oh < outH; ++oh) {
    float* top = dx + 2 * oh * inW;
    float* bottom = top + inW;
    const float* d = dy + oh * outW;
    const uint8_t* a = argmax + oh * outW;
    for (int64_t ow = 0; ow < outW; ow += 8) {
      const int64_t n = std::min<int64_t>(8, outW - ow);
      const auto outputs = static_cast<__mmask16>((1u << n) - 1);
      const __m512 values =
          _mm512_maskz_permutexvar_ps(kAll, pairs, _mm512_maskz_loadu_ps(outputs, d + ow));
      const __m512i at = _mm512_maskz_permutexvar_epi32(
          kAll, pairs, _mm512_maskz_cvtepu8_epi32(kAll, _mm_maskz_loadu_epi8(outputs, a + ow)));
      const __m512 t = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(at, topColumn), values);
      const __m512 b = _mm512_maskz_mov_ps(_mm512_cmpeq_epi32_mask(at, bottomColumn), values);
      if (n == 8) {
        _mm512_storeu_ps(top + 2 * ow, t);
        _mm512_storeu_ps(bottom + 2 * ow, b);
      } else if (n == 4) {
        _mm256_storeu_ps(top + 2 * ow, lowHalf(t));
        _mm256_storeu_ps(bottom + 2 * ow, lowHalf(b));
      } else {
        const auto pixels = static_cast<__mmask16>((1u << (2 * n)) - 1);
        _mm512_mask_storeu_ps(top + 2 * ow, pixels, t);
        _mm512_mask_storeu_ps(bottom + 2 * ow, pixels, b);
      }
    }
  }
}
#endif

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
                             const PlaneExtents& e, const WindowGeometry& g) {
  const bool twoByTwo = isTwoByTwoStrideTwo(g);
  for (int64_t p = 0; p < planes; ++p) {
    const float* xp = x + p * e.inH * e.inW;
    float* yp = y + p * e.outH * e.outW;
    uint8_t* ap = argmax ? argmax + p * e.outH * e.outW : nullptr;
    if (twoByTwo)
      forwardPlane2x2(xp, yp, ap, e.inW, e.outH, e.outW);
    else
      forwardPlane(xp, yp, ap, e.inW, e.outH, e.outW, g);
  }
}

void maxPoolingBackwardPlanes(const float* dy, float* dx, const uint8_t* argmax, int64_t planes,
                              const PlaneExtents& e, const WindowGeometry& g, bool allowAvx512) {
  const int64_t inH = e.inH, inW = e.inW, outH = e.outH, outW = e.outW;
  const bool twoByTwo = isTwoByTwoStrideTwo(g);
  [[maybe_unused]] const bool avx512 = allowAvx512 && cpuIsa() >= CpuIsa::Avx512;
  for (int64_t p = 0; p < planes; ++p) {
    float* dxp = dx + p * inH * inW;
    const float* dyp = dy + p * outH * outW;
    const uint8_t* ap = argmax + p * outH * outW;
    if (twoByTwo) {
#ifdef DL4CPP_X86_KERNELS
      if (avx512)
        backwardPlane2x2Avx512(dyp, ap, dxp, inW, outH, outW);
      else
        backwardPlane2x2(dyp, ap, dxp, inW, outH, outW);
#else
      backwardPlane2x2(dyp, ap, dxp, inW, outH, outW);
#endif
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

void maxPoolingForward(const Tensor& x, Tensor& y, const WindowGeometry& g, uint8_t* argmax) {
  const PlaneExtents e{x.dim(2), x.dim(3), y.dim(2), y.dim(3)};
  const int64_t outPlane = e.outH * e.outW;
  const float* xs = x.data();
  float* ys = y.data();
  parallelFor(x.dim(0) * x.dim(1), [&](int64_t p) {
    maxPoolingForwardPlanes(xs + p * e.inH * e.inW, ys + p * outPlane,
                            argmax ? argmax + p * outPlane : nullptr, 1, e, g);
  });
}

void maxPoolingBackward(const Tensor& dy, Tensor& dx, const WindowGeometry& g,
                        const uint8_t* argmax, bool allowAvx512) {
  const PlaneExtents e{dx.dim(2), dx.dim(3), dy.dim(2), dy.dim(3)};
  const int64_t outPlane = e.outH * e.outW;
  const float* dys = dy.data();
  float* dxs = dx.data();
  // Planes are independent, so overlapping windows add without races.
  parallelFor(dx.dim(0) * dx.dim(1), [&](int64_t p) {
    maxPoolingBackwardPlanes(dys + p * outPlane, dxs + p * e.inH * e.inW, argmax + p * outPlane, 1,
                             e, g, allowAvx512);
  });
}

}  // namespace dl4cpp::cpu
