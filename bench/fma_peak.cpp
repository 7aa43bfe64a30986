// The processor's single-precision FMA peak as code can reach it, at each ISA level this process
// runs at or below (CpuIsa.h; DL4CPP_MAX_CPU_ISA caps it): 12 independent chains of AVX-512 (16
// lanes) or AVX2 (8 lanes) FMAs held in registers (enough to cover the FMA latency on two pipes),
// no memory traffic at all, on 1 thread and on every core at once. The peaks that
// docs/performance.md compares kernels against come from here; the
// all-core run also shows whether running every core lowers the clock (it would show below
// cores x the 1-thread figure). Median of --repeats runs.
//   bench_fma_peak [--seconds 1] [--repeats 5]
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <vector>

#include "Median.h"
#include "SampleSupport.h"
#include "nn/backend/DeviceContext.h"

using bench::median;

namespace {

constexpr int kChains = 12;

// Runs `steps` steps of kChains FMAs; returns a sum of the chains so the work cannot be dropped.
// Distinct starting values: chains that start equal stay equal, and the compiler may merge them.
__attribute__((target("avx512f"), noinline)) float avx512Chains(int64_t steps) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(1.0f + static_cast<float>(c) * 1e-3f);
  const __m512 m = _mm512_set1_ps(0.9999999f), a = _mm512_set1_ps(1e-7f);
  for (int64_t s = 0; s < steps; ++s)
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], m, a);
  __m512 sum = _mm512_setzero_ps();
  for (int c = 0; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  return _mm512_reduce_add_ps(sum);
}

__attribute__((target("avx2,fma"), noinline)) float avx2Chains(int64_t steps) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(1.0f + static_cast<float>(c) * 1e-3f);
  const __m256 m = _mm256_set1_ps(0.9999999f), a = _mm256_set1_ps(1e-7f);
  for (int64_t s = 0; s < steps; ++s)
#pragma GCC unroll 12
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], m, a);
  __m256 sum = _mm256_setzero_ps();
  for (int c = 0; c < kChains; ++c) sum = _mm256_add_ps(sum, acc[c]);
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  float total = 0;
  for (float lane : lanes) total += lane;
  return total;
}

struct Level {
  dl4cpp::CpuIsa isa;
  int lanes;
  float (*chains)(int64_t steps);
};

// GFLOP/s of `threads` threads each running `steps` steps at once (total FLOPs over the wall time).
double measure(const Level& level, int threads, int64_t steps, float& sink) {
  const auto start = std::chrono::steady_clock::now();
  float sum = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sum)
  sum += level.chains(steps);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  sink += sum;
  const double flopsPerStep = kChains * level.lanes * 2.0;  // multiply + add per lane
  return flopsPerStep * static_cast<double>(steps) * threads / seconds / 1e9;
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
  const int cores = dl4cpp::hardwareConcurrency();
  const Level levels[] = {{dl4cpp::CpuIsa::Avx512, 16, avx512Chains},
                          {dl4cpp::CpuIsa::Avx2, 8, avx2Chains}};
  std::cout << fmt::format(
      "FMA peak ({} register chains), median of {} runs, at each level up to "
      "{}:\n",
      kChains, repeats, dl4cpp::cpuIsaName(dl4cpp::cpuIsa()));
  float sink = 0;
  for (const Level& level : levels) {
    if (level.isa > dl4cpp::cpuIsa()) continue;
    // Calibrate the steps of one run on one thread.
    const int64_t probe = 10'000'000;
    const double probeRate = measure(level, 1, probe, sink);
    const auto steps =
        static_cast<int64_t>(seconds * probeRate * 1e9 / (kChains * level.lanes * 2.0));
    std::vector<double> one, all;
    for (int r = 0; r < repeats; ++r) {
      one.push_back(measure(level, 1, steps, sink));
      all.push_back(measure(level, cores, steps, sink));
    }
    std::cout << fmt::format(
        "  {:8} 1 thread: {:6.1f} GFLOP/s   {} threads: {:6.1f} GFLOP/s ({:.2f}x one)\n",
        dl4cpp::cpuIsaName(level.isa), median(one), cores, median(all), median(all) / median(one));
  }
  if (dl4cpp::cpuIsa() < dl4cpp::CpuIsa::Avx2)
    std::cout << "  (baseline level: no FMA instructions to measure)\n";
  volatile float observed = sink;  // the chains' results are used, so no run can be dropped
  (void)observed;
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_fma_peak: " << e.what() << "\n";
  return 2;
}
