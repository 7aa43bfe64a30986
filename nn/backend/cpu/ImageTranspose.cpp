#include <dl4cpp/nn/backend/cpu/ImageTranspose.h>

#include <algorithm>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DL4CPP_TRANSPOSE_AVX512 1
#endif

#include <dl4cpp/nn/backend/cpu/CpuFeatures.h>

namespace dl4cpp::cpu {

namespace {

void transposeScalar(const float* src, float* dst, int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 16;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile)
    for (int64_t c0 = 0; c0 < cols; c0 += kTile)
      for (int64_t c = c0; c < std::min(c0 + kTile, cols); ++c)
        for (int64_t r = r0; r < std::min(r0 + kTile, rows); ++r) dst[c * rows + r] = src[r * cols + c];
}

#ifdef DL4CPP_TRANSPOSE_AVX512
// One tile: the first `width` floats of `height` rows of src (stride srcStride) become the first
// `height` floats of `width` rows of dst (stride dstStride). Rows beyond `height` load as zeros
// and are never stored.
__attribute__((target("avx512f"))) void transposeTile(const float* src, int64_t srcStride,
                                                      float* dst, int64_t dstStride, int height,
                                                      int width) {
  const auto loadLanes = static_cast<__mmask16>(width == 16 ? 0xFFFF : (1u << width) - 1);
  const auto storeLanes = static_cast<__mmask16>(height == 16 ? 0xFFFF : (1u << height) - 1);
  __m512 r[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i)
    r[i] = i < height ? _mm512_maskz_loadu_ps(loadLanes, src + i * srcStride) : _mm512_setzero_ps();
  // Interleave 32-bit, then 64-bit elements of row pairs, then 128-bit blocks twice: the classic
  // four-stage 16x16 transpose. (The maskz forms: GCC 12's plain ones read an undefined register
  // and warn.)
  constexpr __mmask16 kAll = 0xFFFF;
  constexpr __mmask8 kAll64 = 0xFF;
  __m512 t[16];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_maskz_unpacklo_ps(kAll, r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_maskz_unpackhi_ps(kAll, r[2 * i], r[2 * i + 1]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 1]);
    const __m512d c = _mm512_castps_pd(t[4 * i + 2]), d = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(kAll64, a, c));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(kAll64, a, c));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(kAll64, b, d));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(kAll64, b, d));
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_maskz_shuffle_f32x4(kAll, r[i], r[4 + i], 0x88);
    t[4 + i] = _mm512_maskz_shuffle_f32x4(kAll, r[i], r[4 + i], 0xDD);
    t[8 + i] = _mm512_maskz_shuffle_f32x4(kAll, r[8 + i], r[12 + i], 0x88);
    t[12 + i] = _mm512_maskz_shuffle_f32x4(kAll, r[8 + i], r[12 + i], 0xDD);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm512_maskz_shuffle_f32x4(kAll, t[i], t[8 + i], 0x88);
    r[8 + i] = _mm512_maskz_shuffle_f32x4(kAll, t[i], t[8 + i], 0xDD);
    r[4 + i] = _mm512_maskz_shuffle_f32x4(kAll, t[4 + i], t[12 + i], 0x88);
    r[12 + i] = _mm512_maskz_shuffle_f32x4(kAll, t[4 + i], t[12 + i], 0xDD);
  }
  for (int i = 0; i < width; ++i) _mm512_mask_storeu_ps(dst + i * dstStride, storeLanes, r[i]);
}

__attribute__((target("avx512f"))) void transposeAvx512(const float* src, float* dst,
                                                        int64_t rows, int64_t cols) {
  for (int64_t r0 = 0; r0 < rows; r0 += 16)
    for (int64_t c0 = 0; c0 < cols; c0 += 16)
      transposeTile(src + r0 * cols + c0, cols, dst + c0 * rows + r0, rows,
                    static_cast<int>(std::min<int64_t>(16, rows - r0)),
                    static_cast<int>(std::min<int64_t>(16, cols - c0)));
}
#endif

}  // namespace

void transposeImages(const float* src, float* dst, int64_t images, int64_t rows, int64_t cols,
                     bool allowAvx512) {
#ifdef DL4CPP_TRANSPOSE_AVX512
  const bool avx512 = allowAvx512 && hasAvx512();
#else
  (void)allowAvx512;
#endif
#pragma omp parallel for schedule(static)
  for (int64_t n = 0; n < images; ++n) {
    const float* s = src + n * rows * cols;
    float* d = dst + n * rows * cols;
#ifdef DL4CPP_TRANSPOSE_AVX512
    if (avx512) {
      transposeAvx512(s, d, rows, cols);
      continue;
    }
#endif
    transposeScalar(s, d, rows, cols);
  }
}

}  // namespace dl4cpp::cpu
