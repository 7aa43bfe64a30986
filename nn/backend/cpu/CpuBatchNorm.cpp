// Highway compiles this file once per x86 level (HighwayTargets.h) for the row loops of
// BatchNormRows-inl.h; the dispatch and the channel loops are compiled once (HWY_ONCE).
#include "nn/backend/cpu/HighwayTargets.h"

#ifdef DL4CPP_X86_KERNELS
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "nn/backend/cpu/CpuBatchNorm.cpp"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#endif

#include <cmath>
#include <cstdint>
#include <vector>

#include "nn/backend/cpu/CpuBatchNorm.h"
#include "nn/backend/cpu/ParallelFor.h"
#include "nn/backend/cpu/VectorMath.h"

#ifdef DL4CPP_X86_KERNELS
HWY_BEFORE_NAMESPACE();
namespace dl4cpp::cpu::HWY_NAMESPACE {
#if DL4CPP_HWY_KERNEL_TARGET
#include "nn/backend/cpu/BatchNormRows-inl.h"
#endif
}  // namespace dl4cpp::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
#endif

#if !defined(DL4CPP_X86_KERNELS) || HWY_ONCE
namespace dl4cpp::cpu {

namespace below_avx2 {
#include "nn/backend/cpu/BatchNormRows-inl.h"
}  // namespace below_avx2

namespace {

// The row loops of the level cpuIsa() names; those with two entries: [relu] (BatchNormRows-inl.h).
struct RowLoops {
  decltype(&below_avx2::rowSum) sum;
  decltype(&below_avx2::rowSquaredDeviation) squaredDeviation;
  decltype(&below_avx2::scaleShiftRow<false>) scaleShift[2];
  decltype(&below_avx2::gradientSumsRow) gradientSums;
  decltype(&below_avx2::inputGradientRow) inputGradient;
};
#define DL4CPP_ROW_LOOPS(level)                                                               \
  RowLoops {                                                                                  \
    &level::rowSum, &level::rowSquaredDeviation,                                              \
        {&level::scaleShiftRow<false>, &level::scaleShiftRow<true>}, &level::gradientSumsRow, \
        &level::inputGradientRow                                                              \
  }
RowLoops rowLoops() {
#ifdef DL4CPP_X86_KERNELS
  if (cpuIsa() >= CpuIsa::Avx512) return DL4CPP_ROW_LOOPS(N_AVX3);
  if (cpuIsa() >= CpuIsa::Avx2) return DL4CPP_ROW_LOOPS(N_AVX2);
#endif
  return DL4CPP_ROW_LOOPS(below_avx2);
}
#undef DL4CPP_ROW_LOOPS

// x (N, C, S): channel c holds N rows of S contiguous values, C * S apart.
struct ChannelRows {
  int64_t rows, channels, length;
  explicit ChannelRows(const Tensor& x)
      : rows(x.dim(0)), channels(x.dim(1)), length(x.numel() / (x.dim(0) * x.dim(1))) {}
  int64_t offset(int64_t n, int64_t c) const { return (n * channels + c) * length; }
  double count() const { return double(rows * length); }
};

// y = f((x - mean) * invStd * gamma + beta) per channel, as scale and shift; f: ReLU or none.
void normalize(const ChannelRows& r, const float* x, const float* gamma, const float* beta,
               const float* mean, const float* variance, float eps, bool relu, float* y) {
  const RowLoops loops = rowLoops();
  const auto scaleShift = loops.scaleShift[relu ? 1 : 0];
  parallelFor(r.channels, [&](int64_t c) {
    const float invStd = 1.0f / std::sqrt(variance[c] + eps);
    const float scale = gamma[c] * invStd, shift = beta[c] - mean[c] * scale;
    for (int64_t n = 0; n < r.rows; ++n)
      scaleShift(x + r.offset(n, c), scale, shift, y + r.offset(n, c), r.length);
  });
}

}  // namespace

void batchNormForwardTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                              bool relu, Tensor& y, Tensor& batchMean, Tensor& batchVariance) {
  const ChannelRows r(x);
  const float* xs = x.data();
  float* means = batchMean.data();
  float* variances = batchVariance.data();
  const RowLoops loops = rowLoops();
  // Row sums in float, rows added in double: the rows are short and the channel long.
  parallelFor(r.channels, [&](int64_t c) {
    double sum = 0;
    for (int64_t n = 0; n < r.rows; ++n) sum += loops.sum(xs + r.offset(n, c), r.length);
    const auto mean = static_cast<float>(sum / r.count());
    double squares = 0;
    for (int64_t n = 0; n < r.rows; ++n)
      squares += loops.squaredDeviation(xs + r.offset(n, c), mean, r.length);
    means[c] = mean;
    variances[c] = static_cast<float>(squares / r.count());
  });
  normalize(r, xs, gamma.data(), beta.data(), means, variances, eps, relu, y.data());
}

void batchNormForwardInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                               const Tensor& mean, const Tensor& variance, float eps, bool relu,
                               Tensor& y) {
  normalize(ChannelRows(x), x.data(), gamma.data(), beta.data(), mean.data(), variance.data(), eps,
            relu, y.data());
}

void batchNormBackward(const Tensor& x, const Tensor& y, const Tensor& dy, const Tensor& gamma,
                       const Tensor& batchMean, const Tensor& batchVariance, float eps, bool relu,
                       Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  const ChannelRows r(x);
  const float* xs = x.data();
  const float* dys = dy.data();
  float* dxs = dx.empty() ? nullptr : dx.data();
  const RowLoops loops = rowLoops();
  parallelFor(r.channels, [&](int64_t c) {
    // g, the gradient of the normalised values of channel c: dy itself, or under a ReLU the ReLU
    // op's own gradient of it, row by row into this thread's buffer (a channel's rows stay in
    // cache for the second pass, and dy is read from memory once).
    // g, the gradient of channel c's normalised values: dy, or under a ReLU the ReLU op's own
    // gradient of it, row by row into this thread's buffer (read again from cache by both passes;
    // dy and y are read from memory once).
    thread_local std::vector<float> masked;
    if (relu) {
      if (masked.size() < static_cast<size_t>(r.rows * r.length))
        masked.resize(static_cast<size_t>(r.rows * r.length));
      for (int64_t n = 0; n < r.rows; ++n)
        reluGradient(0.0f, y.data() + r.offset(n, c), dys + r.offset(n, c),
                     masked.data() + n * r.length, r.length);
    }
    const auto gRow = [&](int64_t n) {
      return relu ? masked.data() + n * r.length : dys + r.offset(n, c);
    };
    const float mean = batchMean.data()[c];
    const float invStd = 1.0f / std::sqrt(batchVariance.data()[c] + eps);
    double sumDy = 0, sumDyXhat = 0;
    for (int64_t n = 0; n < r.rows; ++n) {
      float sums[2];
      loops.gradientSums(xs + r.offset(n, c), gRow(n), mean, r.length, sums);
      sumDy += sums[0];
      sumDyXhat += double(sums[1]) * invStd;
    }
    dbeta.data()[c] = static_cast<float>(sumDy);
    dgamma.data()[c] = static_cast<float>(sumDyXhat);
    if (dxs == nullptr) return;
    // dx = gamma invStd (g - sumDy / M - xhat sumDyXhat / M), xhat = (x - mean) invStd.
    const float k = gamma.data()[c] * invStd;
    const auto meanDy = static_cast<float>(sumDy / r.count());
    const auto meanDyXhat = static_cast<float>(sumDyXhat / r.count());
    const float xCoefficient = meanDyXhat * invStd;
    for (int64_t n = 0; n < r.rows; ++n)
      loops.inputGradient(xs + r.offset(n, c), gRow(n), mean, k, meanDy, xCoefficient,
                          dxs + r.offset(n, c), r.length);
  });
}

}  // namespace dl4cpp::cpu
#endif  // HWY_ONCE
