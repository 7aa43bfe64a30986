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

// Channel c's gamma (x - mean) / sqrt(variance + eps) + beta, as x * scale + shift.
struct ChannelTransform {
  const float *gamma, *beta, *mean, *variance;
  float eps;
  float invStd(int64_t c) const { return 1.0f / std::sqrt(variance[c] + eps); }
  std::pair<float, float> scaleAndShift(int64_t c) const {
    const float scale = gamma[c] * invStd(c);
    return {scale, beta[c] - mean[c] * scale};
  }
};

// y = f(x * scale + shift) per channel; f: ReLU or none.
void normalize(const ChannelRows& r, const float* x, const ChannelTransform& transform, bool relu,
               float* y) {
  const RowLoops loops = rowLoops();
  const auto scaleShift = loops.scaleShift[relu ? 1 : 0];
  if (inExampleOrder(r)) {
    float* coefficients = rowResults(2 * r.channels);
    for (int64_t c = 0; c < r.channels; ++c)
      std::tie(coefficients[2 * c], coefficients[2 * c + 1]) = transform.scaleAndShift(c);
    parallelFor(r.rows, [&](int64_t n) {
      for (int64_t c = 0; c < r.channels; ++c)
        scaleShift(x + r.offset(n, c), coefficients[2 * c], coefficients[2 * c + 1],
                   y + r.offset(n, c), r.length);
    });
    return;
  }
  parallelFor(r.channels, [&](int64_t c) {
    const auto [scale, shift] = transform.scaleAndShift(c);
    for (int64_t n = 0; n < r.rows; ++n)
      scaleShift(x + r.offset(n, c), scale, shift, y + r.offset(n, c), r.length);
  });
}

// The gradient reaching a row's normalised values: dy, or under the ReLU dy where the forward
// pass's output was positive. That output is made again into `buffer` by the forward pass's own
// row loop from the same x, scale and shift, so it has the bits the forward pass wrote, without
// reading them from memory.
const float* gradientRow(const RowLoops& loops, bool relu, const float* x, const float* dy,
                         float scale, float shift, int64_t length, float* buffer) {
  if (!relu) return dy;
  loops.scaleShift[1](x, scale, shift, buffer, length);
  reluGradient(0.0f, buffer, dy, buffer, length);
  return buffer;
}

// dx = gamma invStd (g - sumDy / M - xhat sumDyXhat / M), xhat = (x - mean) invStd, as
// k (g - meanDy - (x - mean) xCoefficient); the coefficients of one channel.
struct InputGradientCoefficients {
  float k, meanDy, xCoefficient;
};
// dgamma[c] and dbeta[c] from the channel's sums of g and g (x - mean) invStd (one per row, in
// example order), and the channel's coefficients of dx.
InputGradientCoefficients channelGradients(const ChannelRows& r, const ChannelTransform& t,
                                           int64_t c, float invStd, double sumDy, double sumDyXhat,
                                           float* dgamma, float* dbeta) {
  dbeta[c] = static_cast<float>(sumDy);
  dgamma[c] = static_cast<float>(sumDyXhat);
  const auto meanDyXhat = static_cast<float>(sumDyXhat / r.count());
  return {t.gamma[c] * invStd, static_cast<float>(sumDy / r.count()), meanDyXhat * invStd};
}

// batchNormBackward channel by channel: a channel's g rows made once into this thread's buffer
// (under a ReLU), then its sums and its dx, reading x and g again from cache.
void channelOrderBackward(const ChannelRows& r, const RowLoops& loops, const ChannelTransform& t,
                          const float* x, const float* dy, bool relu, float* dx, float* dgamma,
                          float* dbeta) {
  parallelFor(r.channels, [&](int64_t c) {
    thread_local std::vector<float> masked;
    if (relu && masked.size() < static_cast<size_t>(r.rows * r.length))
      masked.resize(static_cast<size_t>(r.rows * r.length));
    const auto [scale, shift] = t.scaleAndShift(c);
    for (int64_t n = 0; relu && n < r.rows; ++n)
      gradientRow(loops, relu, x + r.offset(n, c), dy + r.offset(n, c), scale, shift, r.length,
                  masked.data() + n * r.length);
    const auto g = [&](int64_t n) {
      return relu ? masked.data() + n * r.length : dy + r.offset(n, c);
    };
    const float mean = t.mean[c];
    const float invStd = t.invStd(c);
    double sumDy = 0, sumDyXhat = 0;
    for (int64_t n = 0; n < r.rows; ++n) {
      float sums[2];
      loops.gradientSums(x + r.offset(n, c), g(n), mean, r.length, sums);
      sumDy += sums[0];
      sumDyXhat += double(sums[1]) * invStd;
    }
    const InputGradientCoefficients k =
        channelGradients(r, t, c, invStd, sumDy, sumDyXhat, dgamma, dbeta);
    if (dx == nullptr) return;
    for (int64_t n = 0; n < r.rows; ++n)
      loops.inputGradient(x + r.offset(n, c), g(n), mean, k.k, k.meanDy, k.xCoefficient,
                          dx + r.offset(n, c), r.length);
  });
}

// batchNormBackward example by example: the sums of g and g (x - mean) of each row, reduced per
// channel in example order; then dx row by row, g made again for it.
void exampleOrderBackward(const ChannelRows& r, const RowLoops& loops, const ChannelTransform& t,
                          const float* x, const float* dy, bool relu, float* dx, float* dgamma,
                          float* dbeta) {
  // Two sums per row, then per channel: its scale and shift; and its coefficients of dx.
  float* sums = rowResults(2 * r.rows * r.channels + 2 * r.channels);
  float* scaleShift = sums + 2 * r.rows * r.channels;
  // Held by the calling thread; the loops below read it through this pointer.
  thread_local std::vector<InputGradientCoefficients> coefficientStore;
  if (coefficientStore.size() < static_cast<size_t>(r.channels))
    coefficientStore.resize(static_cast<size_t>(r.channels));
  InputGradientCoefficients* coefficients = coefficientStore.data();
  for (int64_t c = 0; c < r.channels; ++c)
    std::tie(scaleShift[2 * c], scaleShift[2 * c + 1]) = t.scaleAndShift(c);
  const auto g = [&](int64_t n, int64_t c, float* buffer) {
    const int64_t at = r.offset(n, c);
    return gradientRow(loops, relu, x + at, dy + at, scaleShift[2 * c], scaleShift[2 * c + 1],
                       r.length, buffer);
  };
  parallelFor(r.rows, [&](int64_t n) {
    float* buffer = gradientBuffer(r.length);
    for (int64_t c = 0; c < r.channels; ++c)
      loops.gradientSums(x + r.offset(n, c), g(n, c, buffer), t.mean[c], r.length,
                         sums + 2 * (n * r.channels + c));
  });
  for (int64_t c = 0; c < r.channels; ++c) {
    const float invStd = t.invStd(c);
    double sumDy = 0, sumDyXhat = 0;
    for (int64_t n = 0; n < r.rows; ++n) {
      sumDy += sums[2 * (n * r.channels + c)];
      sumDyXhat += double(sums[2 * (n * r.channels + c) + 1]) * invStd;
    }
    coefficients[c] = channelGradients(r, t, c, invStd, sumDy, sumDyXhat, dgamma, dbeta);
  }
  if (dx == nullptr) return;
  parallelFor(r.rows, [&](int64_t n) {
    float* buffer = gradientBuffer(r.length);
    for (int64_t c = 0; c < r.channels; ++c) {
      const InputGradientCoefficients& k = coefficients[c];
      loops.inputGradient(x + r.offset(n, c), g(n, c, buffer), t.mean[c], k.k, k.meanDy,
                          k.xCoefficient, dx + r.offset(n, c), r.length);
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
  const ChannelTransform transform{gamma.data(), beta.data(), means, variances, eps};
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
    normalize(r, xs, transform, relu, y.data());
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
  normalize(r, xs, transform, relu, y.data());
}

void batchNormForwardInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                               const Tensor& mean, const Tensor& variance, float eps, bool relu,
                               Tensor& y) {
  normalize(ChannelRows(x), x.data(),
            ChannelTransform{gamma.data(), beta.data(), mean.data(), variance.data(), eps}, relu,
            y.data());
}

void batchNormBackward(const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& beta,
                       const Tensor& batchMean, const Tensor& batchVariance, float eps, bool relu,
                       Tensor& dx, Tensor& dgamma, Tensor& dbeta) {
  const ChannelRows r(x);
  const ChannelTransform transform{gamma.data(), beta.data(), batchMean.data(),
                                   batchVariance.data(), eps};
  const auto backward = inExampleOrder(r) ? exampleOrderBackward : channelOrderBackward;
  backward(r, rowLoops(), transform, x.data(), dy.data(), relu, dx.empty() ? nullptr : dx.data(),
           dgamma.data(), dbeta.data());
}

}  // namespace dl4cpp::cpu
#endif  // HWY_ONCE
