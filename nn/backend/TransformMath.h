#pragma once
// The per-element formulas of the transform family (ops/TransformOps.h), for every device: the
// CPU backend's loops and the CUDA kernels call the same code, so both compute the same values.
#include <math.h>

#include <cstdint>

#include "nn/backend/HostDevice.h"
#include "nn/backend/ops/TransformOps.h"

namespace dl4cpp {

// Element i of combineForward's y for the `count` inputs xs, folded left to right.
DL4CPP_HOST_DEVICE inline float combineElement(CombineOp op, const float* const* xs, int count,
                                               int64_t i) {
  float y = xs[0][i];
  for (int k = 1; k < count; ++k) {
    const float x = xs[k][i];
    switch (op) {
      case CombineOp::ADD:
      case CombineOp::AVERAGE:
        y += x;
        break;
      case CombineOp::SUBTRACT:
        y -= x;
        break;
      case CombineOp::PRODUCT:
        y *= x;
        break;
      case CombineOp::MAX:
        y = y < x ? x : y;
        break;
    }
  }
  if (op == CombineOp::AVERAGE) y *= 1.0f / static_cast<float>(count);
  return y;
}

// Element i of the gradient reaching input k, from the output y and its gradient g at i.
DL4CPP_HOST_DEVICE inline float combineGradientElement(CombineOp op, const float* const* xs,
                                                       int count, int k, int64_t i, float y,
                                                       float g) {
  switch (op) {
    case CombineOp::ADD:
      return g;
    case CombineOp::AVERAGE:
      return g * (1.0f / static_cast<float>(count));
    case CombineOp::SUBTRACT:
      return k == 0 ? g : -g;
    case CombineOp::PRODUCT: {
      float d = g;
      for (int j = 0; j < count; ++j)
        if (j != k) d *= xs[j][i];
      return d;
    }
    case CombineOp::MAX: {
      int winner = 0;  // the first input holding the maximum (the last when none does: NaN)
      while (winner + 1 < count && xs[winner][i] != y) ++winner;
      return winner == k ? g : 0.0f;
    }
  }
  return 0.0f;
}

// L2 normalisation of one example: its norm's denominator max(sqrt(sumOfSquares), eps).
DL4CPP_HOST_DEVICE inline double l2Denominator(double sumOfSquares, double eps) {
  const double norm = sqrt(sumOfSquares);
  return norm < eps ? eps : norm;
}

// The gradient of one value x of an example with norm^2 `sumOfSquares` and g . x = `dot`, from its
// output gradient g.
DL4CPP_HOST_DEVICE inline float l2NormalizeGradient(double sumOfSquares, double dot, double eps,
                                                    float x, float g) {
  const double norm = sqrt(sumOfSquares);
  if (norm <= eps) return static_cast<float>(g / eps);
  const double a = 1 / norm, b = dot / (norm * norm * norm);
  return static_cast<float>(g * a - x * b);
}

}  // namespace dl4cpp
