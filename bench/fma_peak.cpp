// The processor's single-precision FMA peak as code can reach it: 12 independent chains of
// AVX-512 FMAs held in registers (enough to cover the FMA latency on two pipes), no memory
// traffic at all, on 1 thread and on every core at once. The GFLOP/s figures that
// docs/performance.md and docs/bench/breakdown.md compare kernels against come from here; the
// all-core run also shows whether running every core lowers the clock (it would show below
// cores x the 1-thread figure). Median of --repeats runs.
//   bench_fma_peak [--seconds 1] [--repeats 5]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <vector>

#include <dl4cpp/dl4cpp.h>
#include <dl4cpp/nn/backend/cpu/CpuFeatures.h>
#include <fmt/format.h>
#include <immintrin.h>

#include "SampleSupport.h"

namespace {

constexpr int kChains = 12;
constexpr double kFlopsPerStep = kChains * 16 * 2;  // 12 vectors of 16 lanes, multiply + add

// Runs `steps` steps of kChains FMAs; returns a sum of the chains so the work cannot be dropped.
__attribute__((target("avx512f"), noinline)) float fmaChains(int64_t steps) {
  __m512 acc[kChains];
  // Distinct starting values: chains that start equal stay equal, and the compiler may merge them.
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(1.0f + static_cast<float>(c) * 1e-3f);
  const __m512 m = _mm512_set1_ps(0.9999999f), a = _mm512_set1_ps(1e-7f);
  for (int64_t s = 0; s < steps; ++s)
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], m, a);
  __m512 sum = _mm512_setzero_ps();
  for (int c = 0; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  return _mm512_reduce_add_ps(sum);
}

// GFLOP/s of `threads` threads each running `steps` steps at once (total FLOPs over the wall time).
double measure(int threads, int64_t steps, float& sink) {
  const auto start = std::chrono::steady_clock::now();
  float sum = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sum)
  sum += fmaChains(steps);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  sink += sum;
  return kFlopsPerStep * static_cast<double>(steps) * threads / seconds / 1e9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

int main(int argc, char** argv) try {
  const samples::SampleOptions options(
      argc, argv,
      {{"seconds", "approximate length of one run (default 1)"},
       {"repeats", "runs per thread count, alternating (default 5)"}});
  const double seconds = options.getDouble("seconds", 1.0);
  const int repeats = static_cast<int>(options.getInt("repeats", 5));
  if (seconds <= 0 || repeats < 1)
    throw std::invalid_argument("--seconds must be > 0, --repeats >= 1");
  if (!dl4cpp::cpu::hasAvx512()) {
    std::cout << "bench_fma_peak: this processor has no AVX-512; nothing to measure\n";
    return 0;
  }
  const int cores = dl4cpp::hardwareConcurrency();
  float sink = 0;
  // Calibrate the steps of one run on one thread.
  const int64_t probe = 10'000'000;
  const double probeRate = measure(1, probe, sink);
  const auto steps = static_cast<int64_t>(seconds * probeRate * 1e9 / kFlopsPerStep);
  std::vector<double> one, all;
  for (int r = 0; r < repeats; ++r) {
    one.push_back(measure(1, steps, sink));
    all.push_back(measure(cores, steps, sink));
  }
  std::cout << fmt::format("FMA peak (AVX-512, {} register chains), median of {} runs:\n", kChains,
                           repeats);
  std::cout << fmt::format("  1 thread:   {:.1f} GFLOP/s\n", median(one));
  std::cout << fmt::format("  {} threads: {:.1f} GFLOP/s ({:.2f}x one)\n", cores, median(all),
                           median(all) / median(one));
  volatile float observed = sink;  // the chains' results are used, so no run can be dropped
  (void)observed;
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_fma_peak: " << e.what() << "\n";
  return 2;
}
