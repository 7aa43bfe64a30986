#pragma once
// Analytic FLOPs of the GEMM-like ops (multiply and add counted separately), from their shapes:
// what a LayerProfiler reads achieved GFLOP/s from, for the ops of the families (ops/) and for the
// kernels planned steps run (Backend::runPlanned).
#include "nn/tensor/Shape.h"

namespace dl4cpp {

// A convolution's forward pass, which are also those of its backward-data and backward-weights
// passes (bias excluded): 2 * N * O * outH * outW * C * kH * kW, from x (N, C, H, W),
// w (O, C, kH, kW), y (N, O, outH, outW).
double convolutionFlops(const Shape& x, const Shape& w, const Shape& y);
// 2 * N * nIn * nOut for an inner product x (N, nIn), w (nOut, nIn), likewise for its backward ops.
double innerProductFlops(const Shape& x, const Shape& w);

}  // namespace dl4cpp
