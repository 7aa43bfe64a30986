// The row-major -> column-major translation of CudaBackend::gemm, checked on the host: a
// reference GEMM with BLAS's column-major definition, called with columnMajorGemm's arguments,
// must give the row-major product for every combination of transposes.
#include <doctest/doctest.h>

#include <vector>

#include "nn/backend/cuda/GemmTranslation.h"
#include "nn/tensor/Random.h"

namespace {

// BLAS sgemm: C (m x n, column-major, ldc) = op(A) op(B) with A, B column-major.
void referenceColumnMajorGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                              const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                              int64_t ldc) {
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      double sum = 0;
      for (int64_t l = 0; l < k; ++l) {
        const float av = transA ? a[l + i * lda] : a[i + l * lda];
        const float bv = transB ? b[j + l * ldb] : b[l + j * ldb];
        sum += double(av) * bv;
      }
      c[i + j * ldc] = static_cast<float>(sum);
    }
}

}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("GemmTranslation: the column-major call computes the row-major product") {
    dl4cpp::Random random(7);
    const int64_t m = 5, n = 3, k = 4;
    for (bool transA : {false, true})
      for (bool transB : {false, true}) {
        CAPTURE(transA);
        CAPTURE(transB);
        // A is stored (m x k), or (k x m) when transposed; B (k x n) or (n x k); all row-major.
        std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
        for (float& v : a) v = static_cast<float>(random.uniform(-1, 1));
        for (float& v : b) v = static_cast<float>(random.uniform(-1, 1));
        auto opA = [&](int64_t i, int64_t l) {
          return transA ? a[static_cast<size_t>(l * m + i)] : a[static_cast<size_t>(i * k + l)];
        };
        auto opB = [&](int64_t l, int64_t j) {
          return transB ? b[static_cast<size_t>(j * k + l)] : b[static_cast<size_t>(l * n + j)];
        };

        const dl4cpp::cuda::ColumnMajorGemm g =
            dl4cpp::cuda::columnMajorGemm(transA, transB, m, n, k);
        std::vector<float> c(static_cast<size_t>(m * n), -1.0f);
        referenceColumnMajorGemm(g.transFirst, g.transSecond, g.m, g.n, g.k, b.data(), g.ldFirst,
                                 a.data(), g.ldSecond, c.data(), g.ldc);
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double want = 0;
            for (int64_t l = 0; l < k; ++l) want += double(opA(i, l)) * opB(l, j);
            CHECK(c[static_cast<size_t>(i * n + j)] == doctest::Approx(want).epsilon(1e-6));
          }
      }
  }

  TEST_CASE("GemmTranslation: leading dimensions never drop below 1 (empty products)") {
    const auto g = dl4cpp::cuda::columnMajorGemm(false, false, 1, 0, 0);
    CHECK(g.ldFirst >= 1);
    CHECK(g.ldSecond >= 1);
    CHECK(g.ldc >= 1);
  }
}
