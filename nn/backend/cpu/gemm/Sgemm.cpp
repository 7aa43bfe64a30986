#include "nn/backend/cpu/gemm/Sgemm.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <array>
#include <atomic>

#include "nn/backend/cpu/CpuIsa.h"
#include "nn/backend/cpu/KernelTable.h"
#include "nn/backend/cpu/ParallelFor.h"
#include "nn/backend/cpu/X86Kernels.h"
#include "nn/backend/cpu/gemm/SgemmStatus.h"
#include "nn/core/Error.h"

namespace dl4cpp::cpu {

namespace {

// Micro-tile MR x NR: 12 rows x 2 vectors, 24 accumulators, the fastest tile on LeNet's shapes.
// Blocks of K, M and N: KC 512 keeps the K of LeNet's 128 x 800 x 500 product in one block, so C
// is not read back between K blocks; NC makes no difference on these shapes.
constexpr int64_t kMR = 12, kNR = 32, kKC = 512, kMC = 240, kNC = 1024;
constexpr int kNV = kNR / 16;
constexpr int64_t kAlignFloats = 16;  // packed panels start on a 64-byte line
// A without a transposed op is read in place where its rows are short (lda at most
// kInPlaceRowsMaxLd: a packed row takes kKC floats whatever kc is, and its cache lines and pages
// cost more than the copy saves) or a column block is at most kInPlaceRowsMaxColumns wide (the
// copy is not amortised over so few columns, as in LeNet's 128 x 10 x 500 product); it is packed
// otherwise, which holds up where lda is a multiple of 4 KiB and reading in place is slower.
constexpr int64_t kInPlaceRowsMaxLd = 64, kInPlaceRowsMaxColumns = 4 * kNR;
// Column splits between threads are in vectors (below).
constexpr int64_t kSplitColumns = 16;

int64_t roundUp(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// B without a transposed op may be packed where more than one MR-row panel reads a block too big
// for L1 (the room for it is reserved whenever so); whether it is depends on ldb (packB below).
constexpr int64_t kInCacheFloats = 8192;
bool mayPackRowsOfB(int64_t m, int64_t n, int64_t k) {
  return m > kMR && std::min(k, kKC) * std::min(n, kNC) > kInCacheFloats;
}
// Floats of the packed blocks for one thread (counting A wherever it may be packed, whatever
// lda).
int64_t packedAFloats(int64_t m, int64_t n) {
  return n <= kInPlaceRowsMaxColumns ? 0 : roundUp(std::min(m, kMC), kMR) * kKC;
}
int64_t perThreadFloats(bool transB, int64_t m, int64_t n, int64_t k) {
  const bool packedRoom = transB || mayPackRowsOfB(m, n, k);
  const int64_t packedB = packedRoom ? std::min(k, kKC) * roundUp(std::min(n, kNC), kNR) : 0;
  return kAlignFloats + packedAFloats(m, n) + packedB;
}

// One product, or the part of it one thread computes.
struct Problem {
  bool transA, transB, accumulate;
  int64_t m, n, k;
  const float* a;
  int64_t lda;
  const float* b;
  int64_t ldb;
  float* c;
  int64_t ldc;
};

// Rows [begin, end) of g's product, or columns when `byColumns`.
Problem part(const Problem& g, bool byColumns, int64_t begin, int64_t end) {
  Problem p = g;
  if (byColumns) {
    p.n = end - begin;
    p.b += g.transB ? begin * g.ldb : begin;
    p.c += begin;
  } else {
    p.m = end - begin;
    p.a += g.transA ? begin : begin * g.lda;
    p.c += begin * g.ldc;
  }
  return p;
}

#ifdef DL4CPP_X86_KERNELS

// Whether a block of B is packed into kc x NR panels: always where its op transposes it. Without
// one, its panel's rows are read in place ldb apart, and where ldb is a multiple of 2 KiB (layers
// 512, 1024, 2048 wide) they fall in few L1 sets and the product runs far slower than packed,
// whatever M. Elsewhere packing pays only once 16 row panels share the copy (bench_sgemm).
constexpr int64_t kAliasingLdb = 512, kPackedRowsMinM = 16 * kMR;
bool packB(const Problem& g) {
  if (g.transB) return true;
  if (!mayPackRowsOfB(g.m, g.n, g.k)) return false;
  return g.ldb % kAliasingLdb == 0 || g.m >= kPackedRowsMinM;
}

// Whether a block of A, nc columns of C wide, is packed. Without a transposed op (rows of kKC
// floats), see kInPlaceRowsMaxLd above. With one, a panel's MR entries of a step are contiguous
// but the steps lie lda apart, aliasing in L1 as B's rows do; packed into MR-interleaved panels
// wherever several column panels read it.
bool packA(bool transA, int64_t lda, int64_t nc) {
  if (transA) return nc > kInPlaceRowsMaxColumns;
  return lda > kInPlaceRowsMaxLd && nc > kInPlaceRowsMaxColumns;
}

// --- Micro-kernel --------------------------------------------------------------------------------

// c[R, 16·V] (+)= Σ_p a_p · b_p over kc steps p, the sum of each element in p order from zero, then
// added to c when `accumulate`. Column r of step p is a[r * rowStride + p * aStep], rowStride being
// kRowStride, or aRow where kRowStride is 0: packed rows (kRowStride = kKC, aStep = 1), A with a
// transposed op in place (kRowStride = 1, aStep = lda) or packed (kRowStride = 1, aStep = MR), A
// without one in place (kRowStride = 0, aRow = lda, aStep = 1). Row p of b is 16·V floats at b + p
// * bStep. Where kMasked, the last vector's lanes are limited to `last`, in the loads of b (read in
// place, its last vector may end past the matrix) and the loads and stores of c. Unmasked where all
// 16 lanes are in: in the loop, the mask would be reloaded from the stack at every step, and masked
// stores to c are slower where c is not in cache.
template <int R, int V, int64_t kRowStride, bool kMasked>
__attribute__((target("avx512f"))) void microKernel(int64_t kc, const float* a, int64_t aRow,
                                                    int64_t aStep, const float* b, int64_t bStep,
                                                    float* c, int64_t ldc, __mmask16 last,
                                                    bool accumulate) {
  const int64_t rowStride = kRowStride ? kRowStride : aRow;
  __m512 acc[R][V];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int64_t v = 0; v < V; ++v) acc[r][v] = _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; ++p, a += aStep, b += bStep) {
    __m512 bv[V];
#pragma GCC unroll 4
    for (int64_t v = 0; v < V; ++v)
      bv[v] = kMasked && v == V - 1 ? _mm512_maskz_loadu_ps(last, b + 16 * v)
                                    : _mm512_loadu_ps(b + 16 * v);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * rowStride]);
#pragma GCC unroll 4
      for (int64_t v = 0; v < V; ++v) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r, c += ldc)
#pragma GCC unroll 4
    for (int64_t v = 0; v < V; ++v) {
      if (kMasked && v == V - 1) {
        if (accumulate)
          acc[r][v] = _mm512_add_ps(_mm512_maskz_loadu_ps(last, c + 16 * v), acc[r][v]);
        _mm512_mask_storeu_ps(c + 16 * v, last, acc[r][v]);
      } else {
        if (accumulate) acc[r][v] = _mm512_add_ps(_mm512_loadu_ps(c + 16 * v), acc[r][v]);
        _mm512_storeu_ps(c + 16 * v, acc[r][v]);
      }
    }
}

using MicroKernel = void (*)(int64_t, const float*, int64_t, int64_t, const float*, int64_t, float*,
                             int64_t, __mmask16, bool);

template <int64_t kRowStride, bool kMasked>
struct MicroKernelFor {
  template <int R, int V>
  struct Pick {
    static constexpr MicroKernel kernel = &microKernel<R, V, kRowStride, kMasked>;
  };
};
// [masked][R - 1][V - 1] for one layout of A.
template <int64_t kRowStride>
constexpr auto kernelsFor() {
  return std::array{kernelTable<MicroKernelFor<kRowStride, false>::template Pick, kMR, kNV>(),
                    kernelTable<MicroKernelFor<kRowStride, true>::template Pick, kMR, kNV>()};
}
constexpr auto kPackedAKernels = kernelsFor<kKC>();
constexpr auto kTransposedAKernels = kernelsFor<1>();
constexpr auto kRowsAKernels = kernelsFor<0>();

// --- Packing -------------------------------------------------------------------------------------

// Rows [0, rows) of op(A) = A ('N'), columns [0, kc): each row copied to a row of kKC floats, so
// the micro-kernel finds a panel's MR entries of one step at constant offsets.
void packRows(const float* a, int64_t lda, int64_t rows, int64_t kc, float* packed) {
  for (int64_t i = 0; i < rows; ++i) std::copy_n(a + i * lda, kc, packed + i * kKC);
}

// r[i] becomes column i of the 16 x 16 matrix whose rows r held. (The maskz forms with every lane
// set: GCC 12's plain ones read an undefined register and warn.)
__attribute__((target("avx512f"), always_inline)) inline void transpose16(__m512 r[16]) {
  __m512 t[16];
#pragma GCC unroll 8
  for (int64_t i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_maskz_unpacklo_ps(0xFFFF, r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_maskz_unpackhi_ps(0xFFFF, r[2 * i], r[2 * i + 1]);
  }
  // r[4i + q], 128-bit lane l: column 4l + q of rows 4i .. 4i + 3.
#pragma GCC unroll 4
  for (int64_t i = 0; i < 4; ++i) {
    const __m512d t0 = _mm512_castps_pd(t[4 * i]), t1 = _mm512_castps_pd(t[4 * i + 1]);
    const __m512d t2 = _mm512_castps_pd(t[4 * i + 2]), t3 = _mm512_castps_pd(t[4 * i + 3]);
    r[4 * i] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xFF, t0, t2));
    r[4 * i + 1] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xFF, t0, t2));
    r[4 * i + 2] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xFF, t1, t3));
    r[4 * i + 3] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xFF, t1, t3));
  }
  // Lanes 0/2 (0x88) or 1/3 (0xDD) of each of two vectors: first rows 0-7, then all 16.
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {
    t[q] = _mm512_maskz_shuffle_f32x4(0xFFFF, r[q], r[4 + q], 0x88);
    t[4 + q] = _mm512_maskz_shuffle_f32x4(0xFFFF, r[q], r[4 + q], 0xDD);
    t[8 + q] = _mm512_maskz_shuffle_f32x4(0xFFFF, r[8 + q], r[12 + q], 0x88);
    t[12 + q] = _mm512_maskz_shuffle_f32x4(0xFFFF, r[8 + q], r[12 + q], 0xDD);
  }
#pragma GCC unroll 4
  for (int q = 0; q < 4; ++q) {
    r[q] = _mm512_maskz_shuffle_f32x4(0xFFFF, t[q], t[8 + q], 0x88);
    r[8 + q] = _mm512_maskz_shuffle_f32x4(0xFFFF, t[q], t[8 + q], 0xDD);
    r[4 + q] = _mm512_maskz_shuffle_f32x4(0xFFFF, t[4 + q], t[12 + q], 0x88);
    r[12 + q] = _mm512_maskz_shuffle_f32x4(0xFFFF, t[4 + q], t[12 + q], 0xDD);
  }
}

// Columns [0, cols) of op(B) = Bᵀ ('T': column j is row j of b), rows [0, kc), into kc x NR panels
// (packed[p * NR + j] of each panel), 16 x 16 blocks at a time.
__attribute__((target("avx512f"))) void packTransposed(const float* b, int64_t ldb, int64_t cols,
                                                       int64_t kc, float* packed) {
  for (int64_t j0 = 0; j0 < cols; j0 += 16) {
    const float* src = b + j0 * ldb;
    float* dst = packed + j0 / kNR * kNR * kc + j0 % kNR;
    const int64_t width = std::min<int64_t>(16, cols - j0);
    int64_t p = 0;
    for (; p + 16 <= kc; p += 16) {
      __m512 r[16];
#pragma GCC unroll 16
      for (int j = 0; j < 16; ++j)
        r[j] = j < width ? _mm512_loadu_ps(src + j * ldb + p) : _mm512_setzero_ps();
      transpose16(r);
#pragma GCC unroll 16
      for (int q = 0; q < 16; ++q) _mm512_storeu_ps(dst + (p + q) * kNR, r[q]);
    }
    for (; p < kc; ++p)
      for (int64_t j = 0; j < width; ++j) dst[p * kNR + j] = src[j * ldb + p];
  }
}

// Columns [0, cols) of op(B) = B ('N'), rows [0, kc), into kc x NR panels (packed[p * NR + j] of
// each panel).
__attribute__((target("avx512f"))) void packPanels(const float* b, int64_t ldb, int64_t cols,
                                                   int64_t kc, float* packed) {
  for (int64_t j0 = 0; j0 < cols; j0 += kNR) {
    const int64_t width = std::min(kNR, cols - j0);
    float* dst = packed + j0 * kc;
    if (width < kNR) {
      for (int64_t p = 0; p < kc; ++p) std::copy_n(b + p * ldb + j0, width, dst + p * kNR);
      continue;
    }
    for (int64_t p = 0; p < kc; ++p) {
      const float* src = b + p * ldb + j0;
      _mm512_storeu_ps(dst + p * kNR, _mm512_loadu_ps(src));
      _mm512_storeu_ps(dst + p * kNR + 16, _mm512_loadu_ps(src + 16));
    }
  }
}

// Rows [0, rows) of op(A) = Aᵀ ('T': row i is column i of a), columns [0, kc), into MR-interleaved
// panels (packed[p * MR + r] of each panel): MR contiguous floats per step.
void packInterleaved(const float* a, int64_t lda, int64_t rows, int64_t kc, float* packed) {
  for (int64_t i0 = 0; i0 < rows; i0 += kMR) {
    const int64_t height = std::min(kMR, rows - i0);
    float* dst = packed + i0 * kc;
    for (int64_t p = 0; p < kc; ++p) std::copy_n(a + p * lda + i0, height, dst + p * kMR);
  }
}

// --- Blocking ------------------------------------------------------------------------------------

// The whole of `g` on the calling thread. Loops as BLIS: N blocks, K blocks (B packed where packB
// says so), M blocks (A packed where packA says so), then NR-wide column panels, each met by every
// MR-row panel of the M block. Operands not packed are read in place, at a stride of lda or ldb
// per step: where a panel is read once or twice, a copy would cost more than the strides.
__attribute__((target("avx512f"))) void gemmOnThread(const Problem& g, float* scratch) {
  const auto misalignment =
      static_cast<int64_t>(reinterpret_cast<uintptr_t>(scratch) / sizeof(float) % kAlignFloats);
  float* packedA = scratch + (kAlignFloats - misalignment) % kAlignFloats;
  float* packedB = packedA + packedAFloats(g.m, g.n);
  for (int64_t jc = 0; jc < g.n; jc += kNC) {
    const int64_t nc = std::min(kNC, g.n - jc);
    for (int64_t pc = 0; pc < g.k; pc += kKC) {
      const int64_t kc = std::min(kKC, g.k - pc);
      const bool accumulate = g.accumulate || pc > 0;
      const float* bBlock = g.b + pc * g.ldb + jc;
      int64_t bStep = g.ldb, bPanel = kNR;
      if (packB(g)) {
        if (g.transB)
          packTransposed(g.b + jc * g.ldb + pc, g.ldb, nc, kc, packedB);
        else
          packPanels(bBlock, g.ldb, nc, kc, packedB);
        bBlock = packedB, bStep = kNR, bPanel = kNR * kc;
      }
      for (int64_t ic = 0; ic < g.m; ic += kMC) {
        const int64_t mc = std::min(kMC, g.m - ic);
        const float* aBlock = g.a + pc * g.lda + ic;
        int64_t aStep = g.lda, aPanel = kMR;
        const auto* kernels = &kTransposedAKernels;
        const bool packed = packA(g.transA, g.lda, nc);
        if (packed && g.transA) {
          packInterleaved(aBlock, g.lda, mc, kc, packedA);
          aBlock = packedA, aStep = kMR, aPanel = kMR * kc;
        } else if (packed) {
          packRows(g.a + ic * g.lda + pc, g.lda, mc, kc, packedA);
          aBlock = packedA, aStep = 1, aPanel = kMR * kKC, kernels = &kPackedAKernels;
        } else if (!g.transA) {
          aBlock = g.a + ic * g.lda + pc, aStep = 1, aPanel = kMR * g.lda, kernels = &kRowsAKernels;
        }
        for (int64_t jr = 0; jr < nc; jr += kNR) {
          const int64_t cols = std::min(kNR, nc - jr), vectors = (cols + 15) / 16;
          const int64_t lastLanes = cols - 16 * (vectors - 1);
          const auto last = static_cast<__mmask16>((1u << lastLanes) - 1);
          const auto& kernel = (*kernels)[lastLanes < 16];
          const float* bPanelStart = bBlock + jr / kNR * bPanel;
          float* cColumns = g.c + ic * g.ldc + jc + jr;
          for (int64_t ir = 0; ir < mc; ir += kMR) {
            const int64_t rows = std::min(kMR, mc - ir);
            kernel[rows - 1][vectors - 1](kc, aBlock + ir / kMR * aPanel, g.lda, aStep, bPanelStart,
                                          bStep, cColumns + ir * g.ldc, g.ldc, last, accumulate);
          }
        }
      }
    }
  }
}

// Splits C over the threads along the dimension with more panels, columns in units of one vector
// (16) and rows of MR (each thread packs what its part needs, with its own scratch). Vectors, not
// panels, so that LeNet's 800 columns split evenly (its 25 panels of 32 would not).
// The K order of an element does not depend on the split, so neither do the results.
void avx512Sgemm(const Problem& g, float* scratch) {
  const int64_t rowPanels = (g.m + kMR - 1) / kMR, columnPanels = (g.n + kNR - 1) / kNR;
  const bool byColumns = columnPanels >= rowPanels;
  const int64_t panel = byColumns ? kSplitColumns : kMR, extent = byColumns ? g.n : g.m;
  const int64_t perThread = perThreadFloats(g.transB, g.m, g.n, g.k);
  const bool single = singleThreaded();
  parallelRanges((extent + panel - 1) / panel, [&](int64_t first, int64_t last) {
    if (first == last) return;
    float* own = scratch + (single ? 0 : omp_get_thread_num()) * perThread;
    gemmOnThread(part(g, byColumns, first * panel, std::min(last * panel, extent)), own);
  });
}

#endif

}  // namespace

int64_t sgemmScratchFloats(char transA, char transB, int64_t m, int64_t n, int64_t k, int threads) {
  (void)transA;  // A is packed, or not, into the same room whichever its op
  return threads * perThreadFloats(transB == 'T', m, n, k);
}

void sgemm(char transA, char transB, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, int64_t ldc, float* scratch) {
  if (beta != 0.0f && beta != 1.0f) throw BackendError("sgemm: beta must be 0 or 1");
  if ((transA != 'N' && transA != 'T') || (transB != 'N' && transB != 'T'))
    throw BackendError("sgemm: transA and transB must be 'N' or 'T'");
  if (m == 0 || n == 0) return;
  if (k == 0) {  // no terms: beta · c (dnnl_sgemm rejects k = 0)
    if (beta == 0.0f)
      for (int64_t i = 0; i < m; ++i) std::fill_n(c + i * ldc, n, 0.0f);
    return;
  }
  const Problem g{transA == 'T', transB == 'T', beta == 1.0f, m, n, k, a, lda, b, ldb, c, ldc};
#ifdef DL4CPP_X86_KERNELS
  if (cpuIsa() >= CpuIsa::Avx512) {
    avx512Sgemm(g, scratch);
    return;
  }
#endif
  (void)scratch;
  setThreadsWithinLimit(0);  // a caller's thread that never bound to a backend
  // On several threads dnnl_sgemm splits K for some shapes (LeNet's output layer, 128 x 10 x 500,
  // at avx2), so its bits would follow the thread count. C goes instead in fixed panels of its
  // longer side, each a single-threaded dnnl_sgemm (oneDNN runs one thread inside a parallel
  // region), shared out among the threads: every panel, and so every element, is the same
  // whatever the thread count, at a small cost next to a training step.
  constexpr int64_t kPanel = 64;
  const bool byColumns = n >= m;
  const int64_t extent = byColumns ? n : m;
  std::atomic<int> failure{dnnl_success};
  parallelRanges((extent + kPanel - 1) / kPanel, [&](int64_t first, int64_t last) {
    for (int64_t panel = first; panel < last; ++panel) {
      const Problem p = part(g, byColumns, panel * kPanel, std::min((panel + 1) * kPanel, extent));
      const dnnl_status_t status =
          dnnl_sgemm(transA, transB, p.m, p.n, p.k, 1.0f, p.a, p.lda, p.b, p.ldb, beta, p.c, p.ldc);
      if (status != dnnl_success) failure = status;
    }
  });
  throwIfSgemmFailed(static_cast<dnnl_status_t>(failure.load()), "sgemm");
}

}  // namespace dl4cpp::cpu
