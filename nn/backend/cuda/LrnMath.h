#pragma once
// The formulas of the CUDA backend's local response normalisation (LrnParams in OpTypes.h: DL4J's
// definition), one element per call, with the CPU backend's training workspace: scale = u^-beta
// and scale / u per element (u = k + alpha * window sum of x^2). Plain C++ compiled by nvcc for
// the kernels and by the host compiler for test/cuda/LrnMathTest.cpp, which checks them against
// the CPU backend.
#include <math.h>

#include <cstdint>

#include "nn/backend/HostDevice.h"
#include "nn/backend/OpTypes.h"

namespace dl4cpp::cuda {

struct LrnShape {
  int64_t channels, area;  // area: H * W
  LrnParams p;
};

// u^-beta, beta = 0.75 by square roots as on the CPU.
DL4CPP_HOST_DEVICE inline float lrnScale(float u, float beta) {
  if (beta == 0.75f) {
    const float r = sqrtf(u);
    return 1.0f / (r * sqrtf(r));
  }
  return powf(u, -beta);
}

// The channels [first, last] of the window of element i (NCHW index).
DL4CPP_HOST_DEVICE inline void lrnWindow(const LrnShape& s, int64_t i, int64_t& first,
                                         int64_t& last, int64_t& c) {
  c = (i / s.area) % s.channels;
  const int64_t half = s.p.depth / 2;
  first = c - half < 0 ? 0 : c - half;
  last = c + half > s.channels - 1 ? s.channels - 1 : c + half;
}

// Output element i; with `scale` and `scaleOverU` (training) also its workspace entries.
DL4CPP_HOST_DEVICE inline float lrnForwardElement(const float* x, const LrnShape& s, int64_t i,
                                                  float* scale, float* scaleOverU) {
  int64_t first, last, c;
  lrnWindow(s, i, first, last, c);
  float sum = 0.0f;
  for (int64_t j = first; j <= last; ++j) {
    const float v = x[i + (j - c) * s.area];
    sum += v * v;
  }
  const float u = s.p.k + s.p.alpha * sum;
  const float factor = lrnScale(u, s.p.beta);
  if (scale != nullptr) {
    scale[i] = factor;
    scaleOverU[i] = factor / u;
  }
  return x[i] * factor;
}

// Input-gradient element i: dy scale - 2 alpha beta x * window sum of x dy scale / u.
DL4CPP_HOST_DEVICE inline float lrnBackwardElement(const float* x, const float* dy,
                                                   const float* scale, const float* scaleOverU,
                                                   const LrnShape& s, int64_t i) {
  int64_t first, last, c;
  lrnWindow(s, i, first, last, c);
  float sum = 0.0f;
  for (int64_t j = first; j <= last; ++j) {
    const int64_t at = i + (j - c) * s.area;
    sum += x[at] * dy[at] * scaleOverU[at];
  }
  return dy[i] * scale[i] - 2.0f * s.p.alpha * s.p.beta * x[i] * sum;
}

}  // namespace dl4cpp::cuda
