#pragma once
// The formulas of the CUDA backend's global pooling (Backend::globalPoolingForward / Backward):
// one (n, c) plane reduced per call forward, one input-gradient element per call backward. Plain
// C++ compiled by nvcc for the kernels and by the host compiler for
// test/cuda/GlobalPoolingMathTest.cpp, which checks them against the CPU backend.
#include <math.h>

#include <cstdint>

#include "nn/backend/HostDevice.h"
#include "nn/backend/IntegerPower.h"
#include "nn/backend/OpTypes.h"

namespace dl4cpp::cuda {

// One plane of `area` values reduced by `kind`; MAX keeps the first value a NaN would replace
// (as the CPU backend: a NaN never replaces a number).
DL4CPP_HOST_DEVICE inline float globalPoolPlane(PoolingKind kind, int pnorm, const float* x,
                                                int64_t area) {
  if (kind == PoolingKind::MAX) {
    float best = x[0];
    for (int64_t i = 1; i < area; ++i) best = x[i] > best ? x[i] : best;
    return best;
  }
  float sum = 0.0f;
  for (int64_t i = 0; i < area; ++i)
    sum += kind == PoolingKind::PNORM ? powInt(fabsf(x[i]), pnorm) : x[i];
  if (kind == PoolingKind::AVG) return sum / static_cast<float>(area);
  if (kind == PoolingKind::PNORM) return static_cast<float>(pow(double(sum), 1.0 / pnorm));
  return sum;
}

// The index of the first element of a plane equal to its maximum `y` (-1 when y is NaN): where
// MAX's backward pass puts the plane's gradient.
DL4CPP_HOST_DEVICE inline int64_t firstIndexOf(const float* x, int64_t area, float y) {
  for (int64_t i = 0; i < area; ++i)
    if (x[i] == y) return i;
  return -1;
}

// Input-gradient element of AVG, SUM or PNORM for input x, its plane's output y and gradient dy.
DL4CPP_HOST_DEVICE inline float globalPoolBackwardElement(PoolingKind kind, int pnorm, float x,
                                                          float y, float dy, int64_t area) {
  if (kind == PoolingKind::AVG) return dy / static_cast<float>(area);
  if (kind == PoolingKind::SUM) return dy;
  if (y == 0.0f) return 0.0f;  // every x of the plane is 0: the subgradient 0, not 0 / 0
  const float scale = dy / powInt(y, pnorm - 1);
  const float magnitude = pnorm == 1 ? 1.0f : powInt(fabsf(x), pnorm - 1);
  return x > 0.0f ? scale * magnitude : (x < 0.0f ? -scale * magnitude : 0.0f);
}

}  // namespace dl4cpp::cuda
