#pragma once
// What the processor running dl4cpp can do, for the kernels that pick an AVX-512 version at run
// time (the library is built for the baseline x86-64 instruction set).

namespace dl4cpp::cpu {

// AVX-512 Foundation.
inline bool hasAvx512() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
#else
  return false;
#endif
}

// AVX-512 Foundation with the byte/word (BW) and 128/256-bit (VL) extensions.
inline bool hasAvx512BwVl() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl");
  return has;
#else
  return false;
#endif
}

}  // namespace dl4cpp::cpu
