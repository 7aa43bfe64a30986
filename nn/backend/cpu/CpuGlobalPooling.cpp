// Global pooling on the CPU: one reduction per (n, c) plane, planes split across the OpenMP
// threads. Plain loops rather than oneDNN: its pooling with a whole-plane window is slower forward
// (it reorders the plain layout into its blocked one inside every call) and no faster backward,
// and its reduction primitive is slower for SUM and, a reference kernel for the p-norm, far slower
// for PNORM.
#include <algorithm>
#include <cmath>

#include "nn/backend/IntegerPower.h"
#include "nn/backend/cpu/CpuBackend.h"
#include "nn/backend/cpu/ParallelFor.h"

namespace dl4cpp::cpu {

namespace {

// The largest value of a plane; a NaN never replaces a number (as in SubsamplingLayer's MAX).
// Eight running maxima let the compiler keep them in vector registers.
float planeMax(const float* x, int64_t n) {
  constexpr int kLanes = 8;
  float lanes[kLanes];
  std::fill(lanes, lanes + kLanes, x[0]);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) lanes[l] = x[i + l] > lanes[l] ? x[i + l] : lanes[l];
  float best = lanes[0];
  for (int l = 1; l < kLanes; ++l) best = lanes[l] > best ? lanes[l] : best;
  for (; i < n; ++i) best = x[i] > best ? x[i] : best;
  return best;
}

float planeSum(const float* x, int64_t n) {
  float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i) sum += x[i];
  return sum;
}

float planePNorm(const float* x, int64_t n, int p) {
  float sum = 0.0f;
  if (p == 2) {
#pragma omp simd reduction(+ : sum)
    for (int64_t i = 0; i < n; ++i) sum += x[i] * x[i];
  } else {
    for (int64_t i = 0; i < n; ++i) sum += powInt(std::fabs(x[i]), p);
  }
  return static_cast<float>(std::pow(static_cast<double>(sum), 1.0 / p));
}

// dx of one plane for MAX: dy at the first element equal to the maximum y, 0 elsewhere (all 0
// when y is NaN, which no element equals).
void planeMaxBackward(const float* x, float y, float dy, float* dx, int64_t n) {
  std::fill(dx, dx + n, 0.0f);
  const float* at = std::find(x, x + n, y);
  if (at != x + n) dx[at - x] = dy;
}

// dx of one plane for PNORM: dy * x |x|^(p-2) / y^(p-1) = dy / y^(p-1) * sign(x) |x|^(p-1).
void planePNormBackward(const float* x, float y, float dy, float* dx, int64_t n, int p) {
  if (y == 0.0f) {  // every x is 0: the norm's subgradient 0 rather than 0 / 0
    std::fill(dx, dx + n, 0.0f);
    return;
  }
  const float scale = dy / powInt(y, p - 1);
  if (p == 2) {
    for (int64_t i = 0; i < n; ++i) dx[i] = scale * x[i];
  } else if (p == 1) {  // scale * sign(x), 0 at 0
    for (int64_t i = 0; i < n; ++i) dx[i] = x[i] > 0.0f ? scale : (x[i] < 0.0f ? -scale : 0.0f);
  } else {
    for (int64_t i = 0; i < n; ++i)
      dx[i] = scale * std::copysign(powInt(std::fabs(x[i]), p - 1), x[i]);
  }
}

}  // namespace

void CpuBackend::globalPoolingForward(PoolingKind kind, int pnorm, const Tensor& x, Tensor& y) {
  if (x.numel() == 0 || y.numel() == 0) return;
  const float* in = x.data();
  float* out = y.data();
  const int64_t planes = x.dim(0) * x.dim(1), area = x.dim(2) * x.dim(3);
  parallelFor(planes, [=](int64_t p) {
    const float* plane = in + p * area;
    switch (kind) {
      case PoolingKind::MAX:
        out[p] = planeMax(plane, area);
        break;
      case PoolingKind::AVG:
        out[p] = planeSum(plane, area) / static_cast<float>(area);
        break;
      case PoolingKind::SUM:
        out[p] = planeSum(plane, area);
        break;
      case PoolingKind::PNORM:
        out[p] = planePNorm(plane, area, pnorm);
        break;
    }
  });
}

void CpuBackend::globalPoolingBackward(PoolingKind kind, int pnorm, const Tensor& x,
                                       const Tensor& y, const Tensor& dy, Tensor& dx) {
  if (x.numel() == 0 || y.numel() == 0 || dy.numel() == 0 || dx.numel() == 0) return;
  const float* in = x.data();
  const float* out = y.data();
  const float* gradOut = dy.data();
  float* gradIn = dx.data();
  const int64_t planes = x.dim(0) * x.dim(1), area = x.dim(2) * x.dim(3);
  parallelFor(planes, [=](int64_t p) {
    float* plane = gradIn + p * area;
    switch (kind) {
      case PoolingKind::MAX:
        planeMaxBackward(in + p * area, out[p], gradOut[p], plane, area);
        break;
      case PoolingKind::AVG:
        std::fill(plane, plane + area, gradOut[p] / static_cast<float>(area));
        break;
      case PoolingKind::SUM:
        std::fill(plane, plane + area, gradOut[p]);
        break;
      case PoolingKind::PNORM:
        planePNormBackward(in + p * area, out[p], gradOut[p], plane, area, pnorm);
        break;
    }
  });
}

}  // namespace dl4cpp::cpu
