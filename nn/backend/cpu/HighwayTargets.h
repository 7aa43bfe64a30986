#pragma once
// Set up for a kernel file that Highway (libhwy-dev, header-only use) compiles once per x86 level
// dl4cpp dispatches to: include this, then define HWY_TARGET_INCLUDE as the file itself and include
// <hwy/foreach_target.h> and <hwy/highway.h>. Highway's AVX3 target is dl4cpp's avx512 level (F,
// BW, VL, DQ) and its AVX2 target the avx2 level (AVX2 + FMA); cpuIsa(), not Highway's own
// detection, picks the one that runs (highwayKernels), so DL4CPP_MAX_CPU_ISA caps these kernels as
// it caps the rest. Both are compiled whatever the compiler's own flags; SSSE3, SSE4 and AVX3_DL
// are not (nothing dispatches to them); the static target (baseline) is compiled but the kernel
// files define nothing for it: below avx2, CpuBackend runs oneDNN and its own plain loops.
#include "nn/backend/cpu/CpuIsa.h"
#include "nn/backend/cpu/X86Kernels.h"

#ifdef DL4CPP_X86_KERNELS
#define HWY_COMPILE_ALL_ATTAINABLE
#define HWY_DISABLED_TARGETS (HWY_SSSE3 | HWY_SSE4 | HWY_AVX3_DL)

// Whether this kernel file's per-target section is compiled for one of the two levels.
#define DL4CPP_HWY_KERNEL_TARGET (HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX2)

namespace dl4cpp::cpu {

// The AVX3 (avx512) or AVX2 version of a kernel entry point, by cpuIsa(); `avx512` and `avx2` are
// the same function from Highway's N_AVX3 and N_AVX2 namespaces. Callers check cpuIsa() >= Avx2.
template <class Function>
Function* highwayKernel(Function* avx512, Function* avx2) {
  return cpuIsa() >= CpuIsa::Avx512 ? avx512 : avx2;
}

}  // namespace dl4cpp::cpu
#endif
