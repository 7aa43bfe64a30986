#pragma once
// The sum of an AVX-512 register's 16 lanes in a fixed order, for the direct kernels that keep
// partial sums in vector registers and must not depend on anything but their inputs.
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

namespace dl4cpp::cpu {

// (The maskz forms: GCC 12's plain ones read an undefined register and warn.)
__attribute__((target("avx512f"))) inline float sumOfLanes(__m512 v) {
  constexpr __mmask16 kAll = 0xFFFF;
  v = _mm512_add_ps(v, _mm512_maskz_shuffle_f32x4(kAll, v, v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm512_add_ps(v, _mm512_maskz_shuffle_f32x4(kAll, v, v, _MM_SHUFFLE(2, 3, 0, 1)));
  v = _mm512_add_ps(v, _mm512_maskz_permute_ps(kAll, v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm512_add_ps(v, _mm512_maskz_permute_ps(kAll, v, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm512_cvtss_f32(v);
}

}  // namespace dl4cpp::cpu
#endif
