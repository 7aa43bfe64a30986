// Highway compiles this file once per x86 level (HighwayTargets.h) for the vector loops; the
// dispatch and the plain loops are compiled once (HWY_ONCE).
#include "nn/backend/cpu/HighwayTargets.h"

#ifdef DL4CPP_X86_KERNELS
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "nn/backend/cpu/VectorMath.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
// After highway.h (a separate block, so that include sorting leaves it there).
#include <hwy/contrib/math/math-inl.h>
#endif

#include <algorithm>
#include <cmath>
#include <string>

#include "nn/backend/cpu/VectorMath.h"
#include "nn/core/Error.h"

#ifdef DL4CPP_X86_KERNELS
HWY_BEFORE_NAMESPACE();
namespace dl4cpp::cpu::HWY_NAMESPACE {
#if DL4CPP_HWY_KERNEL_TARGET
namespace {
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::ScalableTag<float>;

// v[0, n) = f(v[0, n)), whole vectors, then the tail through a vector-sized buffer.
template <class F>
HWY_INLINE void transform(float* v, int64_t n, F f) {
  const D d;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(f(d, hn::LoadU(d, v + i)), d, v + i);
  if (i < n) {
    HWY_ALIGN_MAX float tail[HWY_MAX_BYTES / sizeof(float)] = {};
    std::copy(v + i, v + n, tail);
    hn::Store(f(d, hn::Load(d, tail)), d, tail);
    std::copy(tail, tail + (n - i), v + i);
  }
}

// y[i] = f(x[i]) over whole vectors, the tail by `scalar` (x and y may be the same array).
template <class F, class Scalar>
HWY_INLINE void mapArray(const float* x, float* y, int64_t n, F f, Scalar scalar) {
  const D d;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(f(d, hn::LoadU(d, x + i)), d, y + i);
  for (; i < n; ++i) y[i] = scalar(x[i]);
}

}  // namespace

void reluArray(const float* x, float* y, int64_t n) {
  // Max returns its second operand for a NaN, as the comparison below: both give 0.
  mapArray(
      x, y, n, [](D d, hn::Vec<D> v) { return hn::Max(v, hn::Zero(d)); },
      [](float v) { return v > 0.0f ? v : 0.0f; });
}

void leakyReluArray(float alpha, const float* x, float* y, int64_t n) {
  mapArray(
      x, y, n,
      [alpha](D d, hn::Vec<D> v) {
        return hn::IfThenElse(hn::Gt(v, hn::Zero(d)), v, hn::Mul(hn::Set(d, alpha), v));
      },
      [alpha](float v) { return v > 0.0f ? v : alpha * v; });
}

void reluGradientArray(float alpha, const float* y, const float* dy, float* dx, int64_t n) {
  const D d;
  const auto lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto slope = hn::Set(d, alpha);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto g = hn::LoadU(d, dy + i);
    hn::StoreU(hn::IfThenElse(hn::Gt(hn::LoadU(d, y + i), hn::Zero(d)), g, hn::Mul(slope, g)), d,
               dx + i);
  }
  for (; i < n; ++i) dx[i] = y[i] > 0.0f ? dy[i] : alpha * dy[i];
}

void tanhArray(float* v, int64_t n) {
  transform(v, n, [](D d, hn::Vec<D> x) { return hn::Tanh(d, x); });
}

void sigmoidArray(float* v, int64_t n) {
  transform(v, n, [](D d, hn::Vec<D> x) {
    // Exp is accurate up to an argument of 104; beyond 88 the sigmoid is below float's smallest
    // normal anyway.
    const auto e = hn::Exp(d, hn::Min(hn::Neg(x), hn::Set(d, 88.0f)));
    return hn::Div(hn::Set(d, 1.0f), hn::Add(hn::Set(d, 1.0f), e));
  });
}
#endif  // DL4CPP_HWY_KERNEL_TARGET
}  // namespace dl4cpp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
#endif

#if !defined(DL4CPP_X86_KERNELS) || HWY_ONCE
namespace dl4cpp::cpu {

void tanhInPlace(float* v, int64_t n) {
#ifdef DL4CPP_X86_KERNELS
  if (cpuIsa() >= CpuIsa::Avx2) return highwayKernel(&N_AVX3::tanhArray, &N_AVX2::tanhArray)(v, n);
#endif
  for (int64_t i = 0; i < n; ++i) v[i] = std::tanh(v[i]);
}

void sigmoidInPlace(float* v, int64_t n) {
#ifdef DL4CPP_X86_KERNELS
  if (cpuIsa() >= CpuIsa::Avx2)
    return highwayKernel(&N_AVX3::sigmoidArray, &N_AVX2::sigmoidArray)(v, n);
#endif
  for (int64_t i = 0; i < n; ++i) v[i] = 1.0f / (1.0f + std::exp(-v[i]));
}

void relu(const float* x, float* y, int64_t n) {
#ifdef DL4CPP_X86_KERNELS
  if (cpuIsa() >= CpuIsa::Avx2)
    return highwayKernel(&N_AVX3::reluArray, &N_AVX2::reluArray)(x, y, n);
#endif
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void leakyRelu(float alpha, const float* x, float* y, int64_t n) {
#ifdef DL4CPP_X86_KERNELS
  if (cpuIsa() >= CpuIsa::Avx2)
    return highwayKernel(&N_AVX3::leakyReluArray, &N_AVX2::leakyReluArray)(alpha, x, y, n);
#endif
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : alpha * x[i];
}

void reluGradient(float alpha, const float* y, const float* dy, float* dx, int64_t n) {
#ifdef DL4CPP_X86_KERNELS
  if (cpuIsa() >= CpuIsa::Avx2)
    return highwayKernel(&N_AVX3::reluGradientArray, &N_AVX2::reluGradientArray)(alpha, y, dy, dx,
                                                                                 n);
#endif
  for (int64_t i = 0; i < n; ++i) dx[i] = y[i] > 0.0f ? dy[i] : alpha * dy[i];
}

void activateInPlace(ActivationKind kind, float* v, int64_t n) {
  switch (kind) {
    case ActivationKind::IDENTITY:
      return;
    case ActivationKind::TANH:
      return tanhInPlace(v, n);
    case ActivationKind::SIGMOID:
      return sigmoidInPlace(v, n);
    case ActivationKind::HARDSIGMOID:
      for (int64_t i = 0; i < n; ++i) v[i] = std::min(std::max(0.2f * v[i] + 0.5f, 0.0f), 1.0f);
      return;
    case ActivationKind::HARDTANH:
      for (int64_t i = 0; i < n; ++i) v[i] = std::min(std::max(v[i], -1.0f), 1.0f);
      return;
    case ActivationKind::RELU:
      for (int64_t i = 0; i < n; ++i) v[i] = std::max(v[i], 0.0f);
      return;
    default:
      throw BackendError("activateInPlace: activation " + std::to_string(static_cast<int>(kind)) +
                         " is not one a recurrent op takes (recurrentActivationSupported)");
  }
}

}  // namespace dl4cpp::cpu
#endif  // HWY_ONCE
