// CpuIsa: the one run-time ISA level, its cap, and oneDNN kept at the same level. scripts/test.sh
// runs the suite at every level the machine has, so each run checks the level it was given.
#include <doctest/doctest.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "nn/backend/cpu/CpuBackend.h"
#include "nn/backend/cpu/CpuIsa.h"

using namespace dl4cpp;

TEST_SUITE("nn/backend/cpu") {
  TEST_CASE("CpuIsa: the level is the native level under DL4CPP_MAX_CPU_ISA, and oneDNN agrees") {
    cpu::CpuBackend backend;  // fixes the level before oneDNN runs, as every process does
    const CpuIsa level = cpuIsa(), native = nativeCpuIsa();
    MESSAGE("ISA level: " << std::string(cpuIsaName(level)) << " (native "
                          << std::string(cpuIsaName(native)) << ")");
    CHECK(level <= native);
    const char* cap = std::getenv("DL4CPP_MAX_CPU_ISA");
    if (cap && *cap) {
      const std::string name(cap);
      CAPTURE(name);
      const CpuIsa capped = name == "avx512" ? CpuIsa::Avx512
                            : name == "avx2" ? CpuIsa::Avx2
                                             : CpuIsa::Baseline;
      CHECK(level == std::min(native, capped));
    } else {
      CHECK(level == native);
    }
#if defined(__x86_64__)
    // oneDNN runs at the same level: no AVX-512 code below it, no AVX2 code at baseline.
    const auto effective = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
    auto has = [&](dnnl_cpu_isa_t isa) {
      return (effective & static_cast<unsigned>(isa)) == static_cast<unsigned>(isa);
    };
    CHECK(has(dnnl_cpu_isa_avx512_core) == (level >= CpuIsa::Avx512));
    CHECK(has(dnnl_cpu_isa_avx2) == (level >= CpuIsa::Avx2));
#else
    // The x86 levels do not exist here: dl4cpp runs its portable code, and oneDNN's ISA values
    // (NEON, SVE on aarch64) are its own, with bits that mean nothing as x86 levels.
    CHECK(native == CpuIsa::Baseline);
#endif
    CHECK(cpuIsaName(CpuIsa::Avx512) == "avx512");
    CHECK(cpuIsaName(CpuIsa::Avx2) == "avx2");
    CHECK(cpuIsaName(CpuIsa::Baseline) == "baseline");
  }
}
