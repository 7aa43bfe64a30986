#pragma once
// The instruction-set level dl4cpp's CPU kernels run at, chosen once per process at run time (the
// library itself is built for baseline x86-64 or aarch64).
//
// Kernel families say which shapes they take; this level alone says which implementation runs.
// DL4CPP_MAX_CPU_ISA=avx512|avx2|baseline caps it, and caps oneDNN to the same level (through
// dnnl_set_max_cpu_isa, as ONEDNN_MAX_CPU_ISA would), so that a whole process behaves as it would
// on a processor of that level: this is how every path is tested on every machine. A cap above
// what the processor has changes nothing. A cap set through ONEDNN_MAX_CPU_ISA alone lowers
// dl4cpp's level too, so the two never disagree. Off x86-64 the level is baseline and a cap
// (still checked for its spelling) changes nothing: oneDNN's own ISAs there, NEON and SVE, are
// ONEDNN_MAX_CPU_ISA's business.
#include <string_view>

namespace dl4cpp {

enum class CpuIsa {
  Baseline,  // SSE2 on x86-64 (oneDNN: SSE4.1 where it has it), NEON on aarch64
  Avx2,      // AVX2 + FMA (Haswell, Zen 1-3)
  Avx512,    // AVX-512 F + BW + VL + DQ (Skylake-SP and later, Zen 4 and later)
};

// The highest level this processor supports, ignoring any cap.
CpuIsa nativeCpuIsa();

// The level kernels run at: the native level under the caps. Read once, on first use (the
// first CPU backend made, at the latest). ConfigError if DL4CPP_MAX_CPU_ISA holds anything but
// avx512, avx2 or baseline (any case; empty means no cap); BackendError if oneDNN had already
// chosen a higher level before the cap could reach it.
CpuIsa cpuIsa();

// "avx512", "avx2" or "baseline": the spelling DL4CPP_MAX_CPU_ISA takes.
std::string_view cpuIsaName(CpuIsa isa);

}  // namespace dl4cpp
