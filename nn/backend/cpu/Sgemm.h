#pragma once
// dl4cpp's own single-precision GEMM for the CPU ops that are GEMMs (Im2colConvolution.h,
// InnerProduct.h). It computes what their dnnl_sgemm calls did, but packs into scratch the caller
// provides and allocates nothing: oneDNN's sgemm mallocs its packing buffers on every call, about
// 260 mallocs per LeNet training step at batch 128 (now none: AllocationTest). Below the AVX-512
// level (cpuIsa()) it calls dnnl_sgemm, and those allocations remain.
//
// The AVX-512 version (Sgemm.cpp) is BLIS-style: 12 x 32 register tiles over blocks of K, M and N,
// each operand packed where that pays and read in place where not. Each element of C sums its K
// terms in the same order whatever the thread count, so results are the same bits on 1 and 2
// threads. Against dnnl_sgemm (bench/sgemm.cpp, Zen 5, medians of 3 runs, dnnl time / ours):
// LeNet's per-image convolution GEMMs on one core 1.09 (20 x 576 x 26) and 1.05 (500 x 64 x 50);
// its 800 -> 500 dense layer 1.00-1.02 on one core, 0.98-1.25 on two; its 500 -> 10 output layer
// 0.96-1.14 on one core, 0.89-1.32 on two. In the training step (bench_lenet_breakdown, medians of
// 6 alternating runs) the convolution GEMMs ran 6% faster, the dense backward data 4-7% slower,
// and the step 10.95 -> 10.85 ms on one thread, 6.19 -> 6.12 ms on two, within the machine's noise.
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
