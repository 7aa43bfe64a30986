#pragma once
// The formulas of global pooling over the real steps of a masked sequence
// (RecurrentOps::maskedPoolingForward / Backward), one (example, feature) row per call, for every
// device: the CPU backend's loops and the CUDA kernels (a thread per row) call the same code.
#include <math.h>

#include <cstdint>

#include "nn/backend/HostDevice.h"
#include "nn/backend/OpTypes.h"

namespace dl4cpp {

// Whether step s is real: mask null (every step real) or mask[s] != 0.
DL4CPP_HOST_DEVICE inline bool realStep(const float* mask, int64_t s) {
  return mask == nullptr || mask[s] != 0.0f;
}

// The pooling of the t values of `row` at the steps `mask` marks real (realStep): MAX, AVG, SUM
// or the p-norm, summed in double; 0 for a row without real steps.
DL4CPP_HOST_DEVICE inline float maskedPoolRow(PoolingKind kind, int pnorm, const float* row,
                                              const float* mask, int64_t t) {
  int64_t count = 0;
  double acc = kind == PoolingKind::MAX ? -HUGE_VAL : 0.0;
  for (int64_t s = 0; s < t; ++s) {
    if (!realStep(mask, s)) continue;
    ++count;
    if (kind == PoolingKind::MAX)
      acc = acc < double(row[s]) ? double(row[s]) : acc;
    else if (kind == PoolingKind::PNORM)
      acc += pow(fabs(double(row[s])), double(pnorm));
    else
      acc += row[s];
  }
  if (count == 0) return 0.0f;
  if (kind == PoolingKind::AVG) acc /= double(count);
  if (kind == PoolingKind::PNORM) acc = pow(acc, 1.0 / pnorm);
  return static_cast<float>(acc);
}

// The gradient `grad` (t values) of one row from dy, the gradient of its pooled value `out`: 0 at
// padded steps; MAX's goes to the first real step holding the maximum.
DL4CPP_HOST_DEVICE inline void maskedPoolRowBackward(PoolingKind kind, int pnorm, const float* row,
                                                     const float* mask, int64_t t, float out,
                                                     float dy, float* grad) {
  int64_t count = 0;
  for (int64_t s = 0; s < t; ++s) {
    grad[s] = 0.0f;
    count += realStep(mask, s) ? 1 : 0;
  }
  if (count == 0) return;
  if (kind == PoolingKind::MAX) {
    for (int64_t s = 0; s < t; ++s)
      if (realStep(mask, s) && row[s] == out) {
        grad[s] = dy;
        return;
      }
    return;
  }
  for (int64_t s = 0; s < t; ++s) {
    if (!realStep(mask, s)) continue;
    if (kind == PoolingKind::AVG) {
      grad[s] = dy / static_cast<float>(count);
    } else if (kind == PoolingKind::SUM) {
      grad[s] = dy;
    } else if (out != 0.0f) {  // PNORM: x |x|^(p-2) / y^(p-1)
      const double v = row[s];
      grad[s] = static_cast<float>(dy * v * pow(fabs(v), double(pnorm - 2)) /
                                   pow(double(out), double(pnorm - 1)));
    }
  }
}

}  // namespace dl4cpp
