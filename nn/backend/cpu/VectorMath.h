#pragma once
// Element-wise functions over float arrays, vectorised by Highway at the avx512 and avx2 levels
// and plain loops below avx2: tanh and the logistic sigmoid in place (the transcendentals of the
// recurrent cells' loops; Highway's contrib/math, within a few ulp of the C library), and the
// rectifiers with their gradients (exact at every level). Each element is computed alone, so
// results do not depend on how an array is split.
#include <cstdint>

#include "nn/backend/OpTypes.h"

namespace dl4cpp::cpu {

void tanhInPlace(float* v, int64_t n);
// 1 / (1 + exp(-v))
void sigmoidInPlace(float* v, int64_t n);

// y = max(x, 0) (0 for a NaN); x and y may be the same array.
void relu(const float* x, float* y, int64_t n);
// y = x > 0 ? x : alpha x; x and y may be the same array.
void leakyRelu(float alpha, const float* x, float* y, int64_t n);
// dx = y > 0 ? dy : alpha dy, from the rectifier's output y; dy and dx may be the same array.
void reluGradient(float alpha, const float* y, const float* dy, float* dx, int64_t n);

// v[0, n) = f(v[0, n)) for an activation recurrentActivationSupported() accepts (TANH and SIGMOID
// vectorised as above, the piecewise-linear ones as plain loops); BackendError for any other.
void activateInPlace(ActivationKind kind, float* v, int64_t n);

}  // namespace dl4cpp::cpu
