#include "nn/backend/cpu/CpuBatchNorm.h"

#include <cmath>

#include "nn/backend/cpu/ParallelFor.h"

namespace dl4cpp::cpu {

namespace {

// x (N, C, S): channel c holds N rows of S contiguous values, C * S apart.
struct ChannelRows {
  int64_t rows, channels, length;
  explicit ChannelRows(const Tensor& x)
      : rows(x.dim(0)), channels(x.dim(1)), length(x.numel() / (x.dim(0) * x.dim(1))) {}
  int64_t offset(int64_t n, int64_t c) const { return (n * channels + c) * length; }
  double count() const { return double(rows * length); }
};

float rowSum(const float* v, int64_t length) {
  float sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t s = 0; s < length; ++s) sum += v[s];
  return sum;
}

float rowSquaredDeviation(const float* v, float mean, int64_t length) {
  float sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t s = 0; s < length; ++s) sum += (v[s] - mean) * (v[s] - mean);
  return sum;
}

// y = x * scale + shift over one row.
void scaleShiftRow(const float* x, float scale, float shift, float* y, int64_t length) {
#pragma omp simd
  for (int64_t s = 0; s < length; ++s) y[s] = x[s] * scale + shift;
}

// y = (x - mean) * invStd * gamma + beta per channel, as scale and shift.
void normalize(const ChannelRows& r, const float* x, const float* gamma, const float* beta,
               const float* mean, const float* variance, float eps, float* y) {
  parallelFor(r.channels, [&](int64_t c) {
    const float invStd = 1.0f / std::sqrt(variance[c] + eps);
    const float scale = gamma[c] * invStd, shift = beta[c] - mean[c] * scale;
    for (int64_t n = 0; n < r.rows; ++n)
      scaleShiftRow(x + r.offset(n, c), scale, shift, y + r.offset(n, c), r.length);
  });
}

}  // namespace

void batchNormForwardTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                              Tensor& y, Tensor& batchMean, Tensor& batchVariance) {
  const ChannelRows r(x);
  const float* xs = x.data();
  float* means = batchMean.data();
  float* variances = batchVariance.data();
  // Row sums in float, rows added in double: the rows are short and the channel long.
  parallelFor(r.channels, [&](int64_t c) {
    double sum = 0;
    for (int64_t n = 0; n < r.rows; ++n) sum += rowSum(xs + r.offset(n, c), r.length);
    const auto mean = static_cast<float>(sum / r.count());
    double squares = 0;
    for (int64_t n = 0; n < r.rows; ++n)
      squares += rowSquaredDeviation(xs + r.offset(n, c), mean, r.length);
    means[c] = mean;
    variances[c] = static_cast<float>(squares / r.count());
  });
  normalize(r, xs, gamma.data(), beta.data(), means, variances, eps, y.data());
}

void batchNormForwardInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                               const Tensor& mean, const Tensor& variance, float eps, Tensor& y) {
  normalize(ChannelRows(x), x.data(), gamma.data(), beta.data(), mean.data(), variance.data(), eps,
            y.data());
}

void batchNormBackward(const Tensor& x, const Tensor& dy, const Tensor& gamma,
                       const Tensor& batchMean, const Tensor& batchVariance, float eps, Tensor& dx,
                       Tensor& dgamma, Tensor& dbeta) {
  const ChannelRows r(x);
  const float* xs = x.data();
  const float* dys = dy.data();
  float* dxs = dx.empty() ? nullptr : dx.data();
  parallelFor(r.channels, [&](int64_t c) {
    const float mean = batchMean.data()[c];
    const float invStd = 1.0f / std::sqrt(batchVariance.data()[c] + eps);
    double sumDy = 0, sumDyXhat = 0;
    for (int64_t n = 0; n < r.rows; ++n) {
      const float* xr = xs + r.offset(n, c);
      const float* dyr = dys + r.offset(n, c);
      float rowDy = 0, rowDyX = 0;
#pragma omp simd reduction(+ : rowDy, rowDyX)
      for (int64_t s = 0; s < r.length; ++s) {
        rowDy += dyr[s];
        rowDyX += dyr[s] * (xr[s] - mean);
      }
      sumDy += rowDy;
      sumDyXhat += double(rowDyX) * invStd;
    }
    dbeta.data()[c] = static_cast<float>(sumDy);
    dgamma.data()[c] = static_cast<float>(sumDyXhat);
    if (dxs == nullptr) return;
    // dx = gamma invStd (dy - sumDy / M - xhat sumDyXhat / M), xhat = (x - mean) invStd.
    const float k = gamma.data()[c] * invStd;
    const auto meanDy = static_cast<float>(sumDy / r.count());
    const auto meanDyXhat = static_cast<float>(sumDyXhat / r.count());
    const float xCoefficient = meanDyXhat * invStd;
    for (int64_t n = 0; n < r.rows; ++n) {
      const float* xr = xs + r.offset(n, c);
      const float* dyr = dys + r.offset(n, c);
      float* dxr = dxs + r.offset(n, c);
#pragma omp simd
      for (int64_t s = 0; s < r.length; ++s)
        dxr[s] = k * (dyr[s] - meanDy - (xr[s] - mean) * xCoefficient);
    }
  });
}

}  // namespace dl4cpp::cpu
