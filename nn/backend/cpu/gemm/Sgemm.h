#pragma once
// dl4cpp's own single-precision GEMM for the CPU ops that are GEMMs (Im2colConvolution.h,
// InnerProduct.h). It computes what their dnnl_sgemm calls did, but packs into scratch the caller
// provides and allocates nothing: oneDNN's sgemm mallocs its packing buffers on every call, and a
// training step must not allocate (AllocationTest). Below the AVX-512 level (cpuIsa()) it calls
// dnnl_sgemm, and those allocations remain, on fixed panels of C so that its results too are the
// same bits whatever the thread count.
//
// The AVX-512 version (Sgemm.cpp) is BLIS-style: 12 x 32 register tiles over blocks of K, M and N,
// each operand packed where that pays and read in place where not. Each element of C sums its K
// terms in the same order whatever the thread count, so results are the same bits on 1 and 2
// threads. It exists for the allocations, not for speed: on LeNet's shapes it runs at dnnl_sgemm's
// speed (bench/sgemm.cpp compares the two).
#include <cstdint>

namespace dl4cpp::cpu {

// Floats of scratch sgemm needs for an m x n x k product with these transposes when it runs on
// `threads` OpenMP threads: packed panels for each thread. sgemm runs on one thread where
// singleThreaded() (ParallelFor.h), else on omp_get_max_threads().
int64_t sgemmScratchFloats(char transA, char transB, int64_t m, int64_t n, int64_t k, int threads);

// Row-major c[m, n] = op(a)[m, k] · op(b)[k, n] + beta · c, with op(x) = x for 'N' and xᵀ for 'T'
// and leading dimensions lda, ldb, ldc. beta is 0 (c is overwritten, whatever it held, NaN
// included) or 1; anything else is a BackendError, as is a failure of the dnnl_sgemm fallback
// (a DnnlError). Opens an OpenMP region over blocks of C unless singleThreaded(), so it runs on the
// calling thread inside another region.
void sgemm(char transA, char transB, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc, float* scratch);

}  // namespace dl4cpp::cpu
