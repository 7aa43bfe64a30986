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
#include <tuple>
#include <utility>
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

bool inExampleOrder(const ChannelRows& r) {
  return selectBatchNormOrder(r.length) == BatchNormOrder::EXAMPLE_ROWS;
}

// The calling thread's buffer of at least `floats` values (the per-row results of the example
// order and the per-channel coefficients), grown once to the largest layer's need.
float* rowResults(int64_t floats) {
  thread_local std::vector<float> results;
  if (results.size() < static_cast<size_t>(floats)) results.resize(static_cast<size_t>(floats));
  return results.data();
}

// The calling thread's buffer for one row of a fused ReLU's gradient, grown once to the longest.
float* gradientBuffer(int64_t length) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < static_cast<size_t>(length)) buffer.resize(static_cast<size_t>(length));
  return buffer.data();
}

// out[n * C + c] = rowOp(offset of row (n, c), c) for every row, example by example.
template <typename RowOp>
void perRowInExampleOrder(const ChannelRows& r, float* out, const RowOp& rowOp) {
  parallelFor(r.rows, [&](int64_t n) {
    for (int64_t c = 0; c < r.channels; ++c) out[n * r.channels + c] = rowOp(r.offset(n, c), c);
  });
}

// The per-channel sum over examples, in example order and in double, of a pass's row results:
// the channel-by-channel loops' own sequence of additions.
double channelSum(const ChannelRows& r, const float* results, int64_t c) {
  double sum = 0;
  for (int64_t n = 0; n < r.rows; ++n) sum += results[n * r.channels + c];
  return sum;
}

// y = f((x - mean) * invStd * gamma + beta) per channel, as scale and shift; f: ReLU or none.
void normalize(const ChannelRows& r, const float* x, const float* gamma, const float* beta,
               const float* mean, const float* variance, float eps, bool relu, float* y) {
  const RowLoops loops = rowLoops();
  const auto scaleShift = loops.scaleShift[relu ? 1 : 0];
  const auto scaleAndShift = [&](int64_t c) {
    const float invStd = 1.0f / std::sqrt(variance[c] + eps);
    const float scale = gamma[c] * invStd;
    return std::pair{scale, beta[c] - mean[c] * scale};
  };
  if (inExampleOrder(r)) {
    float* coefficients = rowResults(2 * r.channels);
    for (int64_t c = 0; c < r.channels; ++c)
      std::tie(coefficients[2 * c], coefficients[2 * c + 1]) = scaleAndShift(c);
    parallelFor(r.rows, [&](int64_t n) {
      for (int64_t c = 0; c < r.channels; ++c)
        scaleShift(x + r.offset(n, c), coefficients[2 * c], coefficients[2 * c + 1],
                   y + r.offset(n, c), r.length);
    });
    return;
  }
  parallelFor(r.channels, [&](int64_t c) {
    const auto [scale, shift] = scaleAndShift(c);
    for (int64_t n = 0; n < r.rows; ++n)
      scaleShift(x + r.offset(n, c), scale, shift, y + r.offset(n, c), r.length);
  });
}

// batchNormBackward example by example: the row sums of g and g * (x - mean) per
// row, reduced per channel; then dx row by row. g (dy, or under a ReLU its gradient) is made
// again for the second pass, row by row in the thread's buffer.
void exampleOrderBackward(const ChannelRows& r, const RowLoops& loops, const Tensor& x,
                          const Tensor& y, const Tensor& dy, const Tensor& gamma,
                          const Tensor& batchMean, const Tensor& batchVariance, float eps,
                          bool relu, Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  const float* xs = x.data();
  const float* dys = dy.data();
  const float* ys = relu ? y.data() : nullptr;
  const float* means = batchMean.data();
  const auto gradientRow = [&](int64_t at, float* buffer) {
    if (!relu) return dys + at;
    reluGradient(0.0f, ys + at, dys + at, buffer, r.length);
    return static_cast<const float*>(buffer);
  };
  // Per row: the sums of g and of g * (x - mean); then per channel: k, meanDy and the coefficient
  // of x for the second pass.
  float* sums = rowResults(2 * r.rows * r.channels + 3 * r.channels);
  float* coefficients = sums + 2 * r.rows * r.channels;
  parallelFor(r.rows, [&](int64_t n) {
    float* buffer = gradientBuffer(r.length);
    for (int64_t c = 0; c < r.channels; ++c) {
      const int64_t at = r.offset(n, c);
      loops.gradientSums(xs + at, gradientRow(at, buffer), means[c], r.length,
                         sums + 2 * (n * r.channels + c));
    }
  });
  for (int64_t c = 0; c < r.channels; ++c) {
    const float invStd = 1.0f / std::sqrt(batchVariance.data()[c] + eps);
    double sumDy = 0, sumDyXhat = 0;
    for (int64_t n = 0; n < r.rows; ++n) {
      sumDy += sums[2 * (n * r.channels + c)];
      sumDyXhat += double(sums[2 * (n * r.channels + c) + 1]) * invStd;
    }
    dbeta.data()[c] = static_cast<float>(sumDy);
    dgamma.data()[c] = static_cast<float>(sumDyXhat);
    const auto meanDyXhat = static_cast<float>(sumDyXhat / r.count());
    coefficients[3 * c] = gamma.data()[c] * invStd;
    coefficients[3 * c + 1] = static_cast<float>(sumDy / r.count());
    coefficients[3 * c + 2] = meanDyXhat * invStd;
  }
  if (dx.empty()) return;
  float* dxs = dx.data();
  parallelFor(r.rows, [&](int64_t n) {
    float* buffer = gradientBuffer(r.length);
    for (int64_t c = 0; c < r.channels; ++c) {
      const int64_t at = r.offset(n, c);
      const float* k = coefficients + 3 * c;
      loops.inputGradient(xs + at, gradientRow(at, buffer), means[c], k[0], k[1], k[2], dxs + at,
                          r.length);
    }
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
  if (inExampleOrder(r)) {
    float* rowTotals = rowResults(r.rows * r.channels);
    perRowInExampleOrder(r, rowTotals,
                         [&](int64_t at, int64_t) { return loops.sum(xs + at, r.length); });
    for (int64_t c = 0; c < r.channels; ++c)
      means[c] = static_cast<float>(channelSum(r, rowTotals, c) / r.count());
    perRowInExampleOrder(r, rowTotals, [&](int64_t at, int64_t c) {
      return loops.squaredDeviation(xs + at, means[c], r.length);
    });
    for (int64_t c = 0; c < r.channels; ++c)
      variances[c] = static_cast<float>(channelSum(r, rowTotals, c) / r.count());
    normalize(r, xs, gamma.data(), beta.data(), means, variances, eps, relu, y.data());
    return;
  }
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
  if (inExampleOrder(r)) {
    exampleOrderBackward(r, loops, x, y, dy, gamma, batchMean, batchVariance, eps, relu, dx, dgamma,
                         dbeta);
    return;
  }
  parallelFor(r.channels, [&](int64_t c) {
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
