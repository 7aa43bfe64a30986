// dl4cpp's sgemm (Sgemm.h) against a double-precision reference, for every transpose pair: sizes
// from 1 to past each block (MR 12, NR 32, KC 512, MC 240, NC 1024; A read in place for blocks of
// up to 128 columns, packed for wider ones), leading dimensions wider than the matrices, beta 0
// over a C full of NaN and beta 1 onto a C holding values. The operands are multiples of 1/8 in
// [-1, 1], so every product and partial sum here is exact in float and the result must equal the
// reference bit for bit, whatever the summation order. Every call also checks that C's columns
// past n and the floats just past its scratch stay untouched. On arbitrary values, the results must
// be the same bits on 1 and 2 threads and inside a parallel region.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "CpuIsaTestUtil.h"
#include "nn/backend/cpu/gemm/Sgemm.h"
#include "nn/core/Error.h"

using namespace dl4cpp;
using testutil::skippedBelow;

namespace {

constexpr float kSentinel = 12345.0f;  // in C's columns past n and after the scratch
constexpr int64_t kGuardFloats = 64;

struct Gemm {
  char transA, transB;
  int64_t m, n, k;
  float beta;
  int64_t pad = 0;  // extra floats in each leading dimension
  // op(A) is [m, k]: stored [m, lda] ('N') or [k, lda] ('T'); likewise op(B) [k, n].
  int64_t lda() const { return (transA == 'N' ? k : m) + pad; }
  int64_t ldb() const { return (transB == 'N' ? n : k) + pad; }
  int64_t ldc() const { return n + pad; }
  int64_t aRows() const { return transA == 'N' ? m : k; }
  int64_t bRows() const { return transB == 'N' ? k : n; }
  std::string name() const {
    return std::string{transA, transB} + " m=" + std::to_string(m) + " n=" + std::to_string(n) +
           " k=" + std::to_string(k) + " beta=" + std::to_string(static_cast<int>(beta)) +
           " pad=" + std::to_string(pad);
  }
};

// Inputs and output of one call, C's padding columns set to the sentinel.
struct Operands {
  std::vector<float> a, b, c;
  Operands(const Gemm& g, float (*value)(int64_t, int64_t))
      : a(static_cast<size_t>(g.aRows() * g.lda())),
        b(static_cast<size_t>(g.bRows() * g.ldb())),
        c(static_cast<size_t>(g.m * g.ldc())) {
    for (size_t i = 0; i < a.size(); ++i) a[i] = value(static_cast<int64_t>(i), 1);
    for (size_t i = 0; i < b.size(); ++i) b[i] = value(static_cast<int64_t>(i), 2);
    for (int64_t i = 0; i < g.m; ++i)
      for (int64_t j = 0; j < g.ldc(); ++j)
        c[static_cast<size_t>(i * g.ldc() + j)] =
            j >= g.n
                ? kSentinel
                : (g.beta == 0 ? std::numeric_limits<float>::quiet_NaN() : value(i * g.n + j, 3));
  }
};

// Multiples of 1/8 in [-1, 1].
float dyadic(int64_t i, int64_t salt) {
  return static_cast<float>((i * 7919 + salt * 104729) % 17 - 8) / 8.0f;
}

// Arbitrary floats in [-1, 1), from a hash of (i, salt): sums of these round differently in
// different orders.
float arbitrary(int64_t i, int64_t salt) {
  uint64_t x = static_cast<uint64_t>(i) * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(salt);
  x = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return static_cast<float>(x >> 40) / static_cast<float>(1 << 23) - 1.0f;
}

// Runs sgemm with the scratch it asks for (for `threads`), followed by a guard that must survive.
void run(const Gemm& g, Operands& o, int threads) {
  std::vector<float> scratch(
      static_cast<size_t>(cpu::sgemmScratchFloats(g.transA, g.transB, g.m, g.n, g.k, threads) +
                          kGuardFloats),
      kSentinel);
  cpu::sgemm(g.transA, g.transB, g.m, g.n, g.k, o.a.data(), g.lda(), o.b.data(), g.ldb(), g.beta,
             o.c.data(), g.ldc(), scratch.data());
  int64_t guardsChanged = 0;
  for (size_t i = scratch.size() - kGuardFloats; i < scratch.size(); ++i)
    guardsChanged += scratch[i] != kSentinel;
  CHECK_MESSAGE(guardsChanged == 0, "floats past the scratch written: " << g.name());
}

// C on the dyadic operands, against the reference computed in double (exact here).
void checkAgainstReference(const Gemm& g) {
  Operands o(g, dyadic);
  const std::vector<float> before = o.c;
  run(g, o, omp_get_max_threads());
  int64_t wrong = 0, paddingChanged = 0;
  double worst = 0;
  for (int64_t i = 0; i < g.m; ++i)
    for (int64_t j = 0; j < g.ldc(); ++j) {
      const auto at = static_cast<size_t>(i * g.ldc() + j);
      if (j >= g.n) {
        paddingChanged += o.c[at] != kSentinel;
        continue;
      }
      double expected = g.beta == 0 ? 0.0 : before[at];
      for (int64_t p = 0; p < g.k; ++p) {
        const float a = g.transA == 'N' ? o.a[static_cast<size_t>(i * g.lda() + p)]
                                        : o.a[static_cast<size_t>(p * g.lda() + i)];
        const float b = g.transB == 'N' ? o.b[static_cast<size_t>(p * g.ldb() + j)]
                                        : o.b[static_cast<size_t>(j * g.ldb() + p)];
        expected += static_cast<double>(a) * b;
      }
      if (!(o.c[at] == expected)) {  // NaN included
        ++wrong;
        worst = std::isnan(o.c[at]) ? INFINITY : std::max(worst, std::abs(o.c[at] - expected));
      }
    }
  CHECK_MESSAGE(wrong == 0, g.name() << ": " << wrong << " elements differ, worst by " << worst);
  CHECK_MESSAGE(paddingChanged == 0, g.name() << ": columns past n written");
}

constexpr char kTransposes[4][2] = {{'N', 'N'}, {'N', 'T'}, {'T', 'N'}, {'T', 'T'}};

// C from 1 thread, from 2, and from each thread of a 2-thread parallel region, on the same inputs.
void checkSameBits(const Gemm& g) {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  Operands one(g, arbitrary);
  run(g, one, 1);
  omp_set_num_threads(2);
  Operands two(g, arbitrary);
  run(g, two, 2);
  CHECK_MESSAGE(one.c == two.c, g.name() << ": 1 and 2 threads differ");
  Operands inside[2] = {Operands(g, arbitrary), Operands(g, arbitrary)};
  int regionThreads = 0, inParallel = 0;
#pragma omp parallel num_threads(2) reduction(+ : regionThreads, inParallel)
  {
    regionThreads = 1;
    inParallel = omp_in_parallel();
    run(g, inside[omp_get_thread_num()], 1);  // the scratch of one thread
  }
  REQUIRE(regionThreads == 2);
  REQUIRE(inParallel == 2);
  CHECK_MESSAGE(one.c == inside[0].c, g.name() << ": thread 0 of a region differs");
  CHECK_MESSAGE(one.c == inside[1].c, g.name() << ": thread 1 of a region differs");
  omp_set_num_threads(saved);
}

}  // namespace

TEST_SUITE("nn/backend/cpu") {
  TEST_CASE("Sgemm: every transpose pair, sizes 1 to 67, beta 0 over NaN and 1, padded strides") {
    const int64_t sizes[] = {1, 7, 13, 33, 67};
    for (const auto& t : kTransposes)
      for (int64_t m : sizes)
        for (int64_t n : sizes)
          for (int64_t k : sizes)
            for (float beta : {0.0f, 1.0f})
              for (int64_t pad : {0, 5}) checkAgainstReference({t[0], t[1], m, n, k, beta, pad});
  }

  TEST_CASE("Sgemm: sizes across the K, M and N blocks (300, 600, 1100) for every transpose pair") {
    const int64_t shapes[][3] = {
        {300, 600, 67}, {600, 300, 300}, {67, 600, 600}, {13, 1100, 33}, {33, 100, 1100}};
    for (const auto& t : kTransposes)
      for (const auto& s : shapes)
        for (float beta : {0.0f, 1.0f})
          checkAgainstReference({t[0], t[1], s[0], s[1], s[2], beta, 3});
  }

  TEST_CASE("Sgemm: rows of B 2 KiB apart (packed whatever M), across K and N blocks") {
    // ldb = n: 512, 1024, 1536 floats. M of 13 and 40 leaves a last row panel of 1 and 4.
    const int64_t shapes[][3] = {{40, 512, 100}, {13, 1024, 70}, {25, 1536, 600}};
    for (const auto& t : kTransposes)
      for (const auto& s : shapes)
        for (float beta : {0.0f, 1.0f})
          checkAgainstReference({t[0], t[1], s[0], s[1], s[2], beta, 0});
  }

  TEST_CASE("Sgemm: k = 0 gives beta times C") {
    for (float beta : {0.0f, 1.0f}) checkAgainstReference({'N', 'N', 13, 40, 0, beta, 2});
  }

  TEST_CASE("Sgemm: the same bits on 1 and 2 threads and inside a parallel region") {
    // At every level: dl4cpp's own sgemm at avx512, below it dnnl_sgemm on fixed panels of C
    // (alone, on its own threads, it splits K of LeNet's output layer at avx2).
    MESSAGE("ISA level: " << std::string(cpuIsaName(cpuIsa())));
    if (omp_get_thread_limit() < 2) {  // scripts/test-sanitizers.sh runs TSan with a limit of 1
      std::cout << "skipped: OMP_THREAD_LIMIT allows no second thread" << std::endl;
      return;
    }
    // LeNet's dense and output layers at batch 128, then, for each pair, odd shapes with two K
    // blocks split by columns and by rows.
    checkSameBits({'N', 'T', 128, 500, 800, 1.0f});
    checkSameBits({'N', 'N', 128, 800, 500, 0.0f});
    checkSameBits({'T', 'N', 500, 800, 128, 0.0f});
    checkSameBits({'N', 'T', 128, 10, 500, 0.0f});
    checkSameBits({'N', 'N', 128, 500, 10, 0.0f});
    checkSameBits({'T', 'N', 10, 500, 128, 0.0f});
    for (const auto& t : kTransposes) {
      checkSameBits({t[0], t[1], 67, 600, 700, 0.0f, 3});
      checkSameBits({t[0], t[1], 600, 67, 700, 1.0f, 3});
    }
  }

  TEST_CASE(
      "Sgemm: beta other than 0 and 1, and transposes other than N and T, are BackendErrors") {
    std::vector<float> a(4, 1.0f), b(4, 1.0f), c(4),
        scratch(static_cast<size_t>(cpu::sgemmScratchFloats('N', 'N', 2, 2, 2, 1)));
    CHECK_THROWS_AS(
        cpu::sgemm('N', 'N', 2, 2, 2, a.data(), 2, b.data(), 2, 0.5f, c.data(), 2, scratch.data()),
        BackendError);
    CHECK_THROWS_AS(
        cpu::sgemm('C', 'N', 2, 2, 2, a.data(), 2, b.data(), 2, 0.0f, c.data(), 2, scratch.data()),
        BackendError);
  }
}
