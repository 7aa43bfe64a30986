#include "nn/backend/cpu/CpuIsa.h"

#include <fmt/format.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <string>

#include "nn/core/Error.h"

namespace dl4cpp {

namespace {

constexpr const char* kCapVariable = "DL4CPP_MAX_CPU_ISA";

std::optional<CpuIsa> capFromEnvironment() {
  const char* raw = std::getenv(kCapVariable);
  if (!raw || !*raw) return std::nullopt;
  std::string value(raw);
  std::transform(value.begin(), value.end(), value.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (CpuIsa isa : {CpuIsa::Avx512, CpuIsa::Avx2, CpuIsa::Baseline})
    if (value == cpuIsaName(isa)) return isa;
  throw ConfigError(fmt::format("{}='{}': expected avx512, avx2 or baseline", kCapVariable, raw));
}

#if defined(__x86_64__)
dnnl_cpu_isa_t onednnIsa(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::Avx512:
      return dnnl_cpu_isa_all;  // its AVX-512 extensions are AVX-512 too
    case CpuIsa::Avx2:
      return dnnl_cpu_isa_avx2;
    case CpuIsa::Baseline:
      return dnnl_cpu_isa_sse41;
  }
  return dnnl_cpu_isa_all;
}

// The level oneDNN dispatches at, in dl4cpp's terms.
CpuIsa onednnLevel() {
  const auto effective = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  const auto includes = [effective](dnnl_cpu_isa_t level) {
    return (effective & static_cast<unsigned>(level)) == static_cast<unsigned>(level);
  };
  if (includes(dnnl_cpu_isa_avx512_core)) return CpuIsa::Avx512;
  if (includes(dnnl_cpu_isa_avx2)) return CpuIsa::Avx2;
  return CpuIsa::Baseline;
}

CpuIsa chooseLevel() {
  const std::optional<CpuIsa> cap = capFromEnvironment();
  CpuIsa level = nativeCpuIsa();
  if (cap) {
    level = std::min(level, *cap);
    // Fails only once oneDNN has generated code; what it settled on is checked below.
    dnnl_set_max_cpu_isa(onednnIsa(*cap));
    if (onednnLevel() > *cap)
      throw BackendError(fmt::format(
          "{}={}: oneDNN already runs at a higher level; set the variable before the process "
          "starts, or read dl4cpp::cpuIsa() before any other oneDNN call",
          kCapVariable, cpuIsaName(*cap)));
  }
  return std::min(level, onednnLevel());
}
#else
// No x86 levels here: dl4cpp runs its portable code, and oneDNN's ISAs (NEON and SVE on aarch64)
// are its own, out of the cap's reach (ONEDNN_MAX_CPU_ISA names them). A valid cap changes nothing.
CpuIsa chooseLevel() {
  const std::optional<CpuIsa> cap = capFromEnvironment();
  return cap ? std::min(nativeCpuIsa(), *cap) : nativeCpuIsa();
}
#endif

}  // namespace

CpuIsa nativeCpuIsa() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const CpuIsa native = [] {
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
      return CpuIsa::Avx512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return CpuIsa::Avx2;
    return CpuIsa::Baseline;
  }();
  return native;
#else
  return CpuIsa::Baseline;
#endif
}

CpuIsa cpuIsa() {
  // A throwing initialiser leaves the static uninitialised: every call reports the bad setting.
  static const CpuIsa level = chooseLevel();
  return level;
}

std::string_view cpuIsaName(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::Avx512:
      return "avx512";
    case CpuIsa::Avx2:
      return "avx2";
    case CpuIsa::Baseline:
      return "baseline";
  }
  return "unknown";
}

}  // namespace dl4cpp
