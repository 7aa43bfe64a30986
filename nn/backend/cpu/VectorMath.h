#pragma once
// tanh and the logistic sigmoid over float arrays, in place: the transcendentals of the recurrent
// cells' loops. Vectorised by Highway's contrib/math at the avx512 and avx2 levels (within a few
// ulp of the C library), the C library's functions below avx2. Each element is computed alone,
// so results do not depend on how an array is split.
#include <cstdint>

#include "nn/backend/OpTypes.h"

namespace dl4cpp::cpu {

void tanhInPlace(float* v, int64_t n);
// 1 / (1 + exp(-v))
void sigmoidInPlace(float* v, int64_t n);

// v[0, n) = f(v[0, n)) for an activation recurrentActivationSupported() accepts (TANH and SIGMOID
// vectorised as above, the piecewise-linear ones as plain loops); BackendError for any other.
void activateInPlace(ActivationKind kind, float* v, int64_t n);

}  // namespace dl4cpp::cpu
