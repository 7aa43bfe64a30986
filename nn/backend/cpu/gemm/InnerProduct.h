#pragma once
// Inner products (dense layers) on plain row-major tensors as dl4cpp's sgemm (Sgemm.h), without
// oneDNN's inner_product primitives: those run the same GEMM as oneDNN's sgemm, so they are no
// faster, but each call through dnnl_primitive_execute allocates (an argument map and a scratchpad
// grantor), and their forward pass adds the bias in a pass of its own. dl4cpp's sgemm packs into
// `scratch` and allocates nothing.
#include <cstdint>

#include "nn/tensor/Tensor.h"

namespace dl4cpp::cpu {

// Floats of scratch each function below needs for a batch of `rows` examples, nIn inputs and nOut
// outputs, on `threads` OpenMP threads (omp_get_max_threads()).
int64_t innerProductScratchFloats(int64_t rows, int64_t nIn, int64_t nOut, int threads);

// y (N, nOut) = x (N, nIn) · wᵀ (w: nOut, nIn) + b (nOut, or empty).
void innerProductForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                         float* scratch);

// dx (N, nIn) = dy (N, nOut) · w.
void innerProductBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx, float* scratch);

// dw (nOut, nIn) = dyᵀ · x; db (nOut, or empty) = the column sums of dy, added in row order.
void innerProductBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                                 float* scratch);

}  // namespace dl4cpp::cpu
