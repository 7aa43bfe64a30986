#include "nn/backend/cpu/gemm/InnerProduct.h"

#include <algorithm>

#include "nn/backend/cpu/gemm/Sgemm.h"

namespace dl4cpp::cpu {

int64_t innerProductScratchFloats(int64_t rows, int64_t nIn, int64_t nOut, int threads) {
  return std::max({sgemmScratchFloats('N', 'T', rows, nOut, nIn, threads),
                   sgemmScratchFloats('N', 'N', rows, nIn, nOut, threads),
                   sgemmScratchFloats('T', 'N', nOut, nIn, rows, threads)});
}

void innerProductForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                         float* scratch) {
  const int64_t rows = x.dim(0), in = x.dim(1), out = w.dim(0);
  float* ys = y.data();
  // The bias is written first and the product accumulated onto it (beta = 1): one pass over y.
  if (!b.empty())
    for (int64_t r = 0; r < rows; ++r) std::copy_n(b.data(), out, ys + r * out);
  sgemm('N', 'T', rows, out, in, x.data(), in, w.data(), in, b.empty() ? 0.0f : 1.0f, ys, out,
        scratch);
}

void innerProductBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx, float* scratch) {
  const int64_t rows = dy.dim(0), out = w.dim(0), in = w.dim(1);
  sgemm('N', 'N', rows, in, out, dy.data(), out, w.data(), in, 0.0f, dx.data(), in, scratch);
}

void innerProductBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                                 float* scratch) {
  const int64_t rows = x.dim(0), in = x.dim(1), out = dw.dim(0);
  sgemm('T', 'N', out, in, rows, dy.data(), out, x.data(), in, 0.0f, dw.data(), in, scratch);
  if (db.empty()) return;
  float* sums = db.data();
  const float* g = dy.data();
  std::fill_n(sums, out, 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) sums[o] += g[r * out + o];
}

}  // namespace dl4cpp::cpu
