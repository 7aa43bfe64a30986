#pragma once
// Row-major GEMM expressed as the column-major call cuBLAS takes. cuBLAS reads a row-major matrix
// as its transpose, so the row-major C (m x n) = op(A) op(B) is computed as the column-major
// C^T = op(B)^T op(A)^T: B is the first operand, m and n swap, each operand keeps its own
// transpose flag, and every leading dimension is the row length of the matrix as stored.
// Plain C++ without CUDA headers, so test/cuda/GemmTranslationTest.cpp checks it on the host
// against a reference column-major GEMM.
#include <algorithm>
#include <cstdint>

namespace dl4cpp::cuda {

struct ColumnMajorGemm {
  bool transFirst, transSecond;  // CUBLAS_OP_T for the first (B) / second (A) operand
  int64_t m, n, k;               // cuBLAS's m, n, k
  int64_t ldFirst, ldSecond, ldc;
};

inline ColumnMajorGemm columnMajorGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k) {
  return {transB,
          transA,
          n,
          m,
          k,
          std::max<int64_t>(1, transB ? k : n),  // B stored (n x k) when transposed, else (k x n)
          std::max<int64_t>(1, transA ? m : k),  // A stored (k x m) when transposed, else (m x k)
          std::max<int64_t>(1, n)};
}

}  // namespace dl4cpp::cuda
