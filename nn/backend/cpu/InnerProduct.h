#pragma once
// Inner products (dense layers) on plain row-major tensors as oneDNN's sgemm, without its
// inner_product primitives: those run the same sgemm (LeNet's 800 -> 500 layer takes the same
// time either way, within the machine's noise), but each call through dnnl_primitive_execute
// allocates (an argument map and a scratchpad grantor), and their forward pass added the bias in a
// pass of its own.
#include <dl4cpp/nn/tensor/Tensor.h>

namespace dl4cpp::cpu {

// y (N, nOut) = x (N, nIn) · wᵀ (w: nOut, nIn) + b (nOut, or empty).
void innerProductForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y);

// dx (N, nIn) = dy (N, nOut) · w.
void innerProductBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx);

// dw (nOut, nIn) = dyᵀ · x; db (nOut, or empty) = the column sums of dy, added in row order.
void innerProductBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db);

}  // namespace dl4cpp::cpu
