#include <dl4cpp/nn/backend/cpu/InnerProduct.h>

#include <oneapi/dnnl/dnnl.h>

#include <algorithm>

#include <dl4cpp/nn/backend/cpu/SgemmStatus.h>

namespace dl4cpp::cpu {

namespace {

// Row-major C[M, N] = op(A) · op(B) + beta · C, with oneDNN's sgemm.
void sgemm(char transA, char transB, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
           const float* b, int64_t ldb, float beta, float* c, const char* what) {
  throwIfSgemmFailed(dnnl_sgemm(transA, transB, m, n, k, 1.0f, a, lda, b, ldb, beta, c, n), what);
}

}  // namespace

void innerProductForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y) {
  const int64_t rows = x.dim(0), in = x.dim(1), out = w.dim(0);
  float* ys = y.data();
  // The bias is written first and the product accumulated onto it (beta = 1): one pass over y.
  if (!b.empty())
    for (int64_t r = 0; r < rows; ++r) std::copy_n(b.data(), out, ys + r * out);
  sgemm('N', 'T', rows, out, in, x.data(), in, w.data(), in, b.empty() ? 0.0f : 1.0f, ys,
        "inner product forward");
}

void innerProductBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx) {
  const int64_t rows = dy.dim(0), out = w.dim(0), in = w.dim(1);
  sgemm('N', 'N', rows, in, out, dy.data(), out, w.data(), in, 0.0f, dx.data(),
        "inner product backward data");
}

void innerProductBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db) {
  const int64_t rows = x.dim(0), in = x.dim(1), out = dw.dim(0);
  sgemm('T', 'N', out, in, rows, dy.data(), out, x.data(), in, 0.0f, dw.data(),
        "inner product backward weights");
  if (db.empty()) return;
  float* sums = db.data();
  const float* g = dy.data();
  std::fill_n(sums, out, 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) sums[o] += g[r * out + o];
}

}  // namespace dl4cpp::cpu
