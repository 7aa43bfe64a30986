#pragma once
// The CPU backend's ordered algorithm tables and the one rule that walks them.
//
// For an op with several kernels (kCpuAlgorithmOps: the convolution passes, ConvolutionChoice.h,
// windowed pooling, PoolingChoice.h, and batch normalisation's loop order, CpuBatchNorm.h) a table
// lists its algorithms in order of preference, each with its name, the shapes it takes (a predicate
// that never asks which CPU it runs on), the lowest ISA level it needs (CpuIsa.h), its scratch size
// and how to run it. selectCpuAlgorithm picks the first entry whose level is at most cpuIsa(),
// whose predicate takes the shape and that does not yield there (CpuAlgorithmYield: an entry a
// later one beats from some level up).
//
// DL4CPP_CPU_ALGORITHM forces one algorithm per op for tests and benchmarks, as comma-separated
// op=name pairs: `DL4CPP_CPU_ALGORITHM=conv_forward=im2col,pooling=onednn`. An unknown op or name
// is a ConfigError on first use; forcing an algorithm on a shape it does not take, or above the ISA
// level, is a CpuAlgorithmError naming the algorithm and the reason, never a silent fallback.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "nn/backend/cpu/CpuIsa.h"
#include "nn/core/Error.h"

namespace dl4cpp::cpu {

// A forced algorithm that cannot run the call it was forced on.
struct CpuAlgorithmError : BackendError {
  using BackendError::BackendError;
};

// The ops that have a table, as DL4CPP_CPU_ALGORITHM names them.
inline constexpr std::string_view kCpuAlgorithmOps[] = {
    "conv_forward", "conv_backward_data", "conv_backward_weights", "pooling", "batch_norm"};

// Where a table's order is not the same at every level: from level `from` up, the rule passes the
// entry over on the shapes `on` takes (every shape where `on` is null), for a later entry that is
// faster there. Forcing the entry still runs it. Empty `from`: the entry never yields.
template <typename... Args>
struct CpuAlgorithmYield {
  std::optional<CpuIsa> from;
  bool (*on)(Args...) = nullptr;
};

// op -> forced algorithm name, parsed from a DL4CPP_CPU_ALGORITHM value ("" gives none). Throws
// ConfigError on a malformed pair; names are checked against the tables by forcedCpuAlgorithm.
// Looked up by string_view (std::less<>), so that choosing a kernel never allocates.
using CpuAlgorithmSetting = std::map<std::string, std::string, std::less<>>;
CpuAlgorithmSetting parseCpuAlgorithmSetting(std::string_view text);

// The name forced for `op`, or "" (read from DL4CPP_CPU_ALGORITHM once, unless set below).
std::string_view forcedCpuAlgorithm(std::string_view op);
// Replaces the environment's setting for the whole process (tests and benchmarks; not to be
// called while ops run on other threads). An empty `setting` forces nothing.
void setCpuAlgorithmSetting(std::string_view text);

// Walks `table` (entries with .name, .minIsa, .takes, .fits(args...) and .yield) and returns the
// entry to run.
template <typename Entry, size_t N, typename... Args>
const Entry& selectCpuAlgorithm(std::string_view op, const Entry (&table)[N], const Args&... args) {
  const std::string_view forced = forcedCpuAlgorithm(op);
  const CpuIsa level = cpuIsa();
  if (!forced.empty()) {
    for (const Entry& e : table) {
      if (e.name != forced) continue;
      if (e.minIsa > level)
        throw CpuAlgorithmError("DL4CPP_CPU_ALGORITHM forces " + std::string(op) + "=" +
                                std::string(forced) + ", which needs the " +
                                std::string(cpuIsaName(e.minIsa)) +
                                " level; this process runs at " + std::string(cpuIsaName(level)));
      if (!e.fits(args...))
        throw CpuAlgorithmError("DL4CPP_CPU_ALGORITHM forces " + std::string(op) + "=" +
                                std::string(forced) + ", which does not take this call's shapes (" +
                                e.takes + ")");
      return e;
    }
    std::string names;
    for (const Entry& e : table) names += (names.empty() ? "" : ", ") + std::string(e.name);
    throw ConfigError("DL4CPP_CPU_ALGORITHM: " + std::string(op) + " has no algorithm '" +
                      std::string(forced) + "' (it has " + names + ")");
  }
  for (const Entry& e : table) {
    if (e.minIsa > level || !e.fits(args...)) continue;
    if (e.yield.from && level >= *e.yield.from && (e.yield.on == nullptr || e.yield.on(args...)))
      continue;
    return e;
  }
  throw BackendError("selectCpuAlgorithm: no " + std::string(op) +
                     " algorithm takes this call; the table's last entry must take every call");
}

}  // namespace dl4cpp::cpu
