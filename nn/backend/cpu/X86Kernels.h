#pragma once
// Whether this build compiles dl4cpp's x86 kernels: GCC or Clang on x86-64, where each kernel
// carries its own target attribute (the rest of the library stays baseline x86-64) and runs only
// where cpuIsa() reaches its level.
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DL4CPP_X86_KERNELS 1
#endif
