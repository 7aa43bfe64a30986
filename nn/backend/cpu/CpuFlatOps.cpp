// The CPU backend's element-wise work that oneDNN has no primitive for: losses, dropout masks,
// running averages and the reductions and scalings of flat buffers (the updater steps are in
// CpuUpdaters.cpp). Plain loops the compiler vectorises, split across the context's OpenMP threads
// (ParallelFor.h: no parallel region on one thread).
#include <algorithm>
#include <cmath>

#include "nn/backend/CounterRandom.h"
#include "nn/backend/cpu/CpuBackend.h"
#include "nn/backend/cpu/ParallelFor.h"

namespace dl4cpp::cpu {

namespace {
constexpr float kLogClip = 1e-10f;  // DL4J LossMCXENT's softmax clip
constexpr float kXentClip = 1e-5f;  // DL4J LossBinaryXENT's clip
constexpr float kKldClip = 1e-5f;   // DL4J LossKLD's clip (Nd4j.EPS_THRESHOLD)

// sign(v): -1, 0 or 1.
float sign(float v) { return static_cast<float>(v > 0.0f) - static_cast<float>(v < 0.0f); }

// dL/dy of the per-example loss, for losses without a fused gradient.
void lossGradientWrtOutput(LossKind loss, const float* y, const float* l, float* g, int64_t n,
                           int64_t k) {
  const int64_t total = n * k;
  // The analyzer takes the null branch of Tensor::data() (a tensor without storage) for one operand
  // while the loop bound comes from another; y, labels and dz have one shape here
  // (MultiLayerNetwork refuses other labels with a ShapeError), so that path cannot happen.
  // NOLINTBEGIN(clang-analyzer-core.NullDereference,clang-analyzer-core.NonNullParamChecker)
  switch (loss) {
    case LossKind::MSE:
      parallelElements(total,
                       [=](int64_t i) { g[i] = 2.0f * (y[i] - l[i]) / static_cast<float>(k); });
      break;
    case LossKind::NEGATIVELOGLIKELIHOOD:
    case LossKind::MCXENT:
      parallelElements(total, [=](int64_t i) { g[i] = -l[i] / std::clamp(y[i], kLogClip, 1.0f); });
      break;
    case LossKind::XENT:
      parallelElements(total, [=](int64_t i) {
        const float p = std::clamp(y[i], kXentClip, 1.0f - kXentClip);
        g[i] = -(l[i] / p - (1.0f - l[i]) / (1.0f - p));
      });
      break;
    case LossKind::MEAN_ABSOLUTE_ERROR:
      parallelElements(total, [=](int64_t i) { g[i] = sign(y[i] - l[i]) / static_cast<float>(k); });
      break;
    case LossKind::L1:
      parallelElements(total, [=](int64_t i) { g[i] = sign(y[i] - l[i]); });
      break;
    case LossKind::L2:
      parallelElements(total, [=](int64_t i) { g[i] = 2.0f * (y[i] - l[i]); });
      break;
    case LossKind::HINGE:
      parallelElements(total, [=](int64_t i) { g[i] = 1.0f - l[i] * y[i] > 0.0f ? -l[i] : 0.0f; });
      break;
    case LossKind::SQUARED_HINGE:
      parallelElements(total, [=](int64_t i) {
        const float margin = 1.0f - l[i] * y[i];
        g[i] = margin > 0.0f ? -2.0f * l[i] * margin : 0.0f;
      });
      break;
    case LossKind::KL_DIVERGENCE:
      // The derivative of the clipped score (DL4J's gradient takes the labels unclipped: a
      // difference of at most 1e-5 / y' per element).
      parallelElements(total, [=](int64_t i) {
        g[i] = -std::clamp(l[i], kKldClip, 1.0f) / std::clamp(y[i], kKldClip, 1.0f);
      });
      break;
  }
  // NOLINTEND(clang-analyzer-core.NullDereference,clang-analyzer-core.NonNullParamChecker)
}

// The per-example losses summed over the batch, before lossAveragesOutputs' division.
double lossSum(LossKind loss, const float* p, const float* l, int64_t total) {
  switch (loss) {
    case LossKind::MSE:
    case LossKind::L2:
      return parallelSum(total,
                         [=](int64_t i) { return double(p[i] - l[i]) * double(p[i] - l[i]); });
    case LossKind::NEGATIVELOGLIKELIHOOD:
    case LossKind::MCXENT:
      return -parallelSum(total, [=](int64_t i) {
        return double(l[i]) * std::log(std::clamp(p[i], kLogClip, 1.0f));
      });
    case LossKind::XENT:
      return -parallelSum(total, [=](int64_t i) {
        const float q = std::clamp(p[i], kXentClip, 1.0f - kXentClip);
        return double(l[i]) * std::log(q) + double(1.0f - l[i]) * std::log(1.0f - q);
      });
    case LossKind::MEAN_ABSOLUTE_ERROR:
    case LossKind::L1:
      return parallelSum(total, [=](int64_t i) { return std::abs(double(p[i] - l[i])); });
    case LossKind::HINGE:
      return parallelSum(total,
                         [=](int64_t i) { return std::max(0.0, 1.0 - double(l[i]) * p[i]); });
    case LossKind::SQUARED_HINGE:
      return parallelSum(total, [=](int64_t i) {
        const double margin = std::max(0.0, 1.0 - double(l[i]) * p[i]);
        return margin * margin;
      });
    case LossKind::KL_DIVERGENCE:
      return parallelSum(total, [=](int64_t i) {
        const float q = std::clamp(l[i], kKldClip, 1.0f);
        return double(q) * std::log(q / std::clamp(p[i], kKldClip, 1.0f));
      });
  }
  return 0.0;
}
}  // namespace

double CpuBackend::lossScore(LossKind loss, const Tensor& y, const Tensor& labels) {
  const double sum = lossSum(loss, y.data(), labels.data(), y.numel());
  return lossAveragesOutputs(loss) ? sum / static_cast<double>(y.dim(1)) : sum;
}

double CpuBackend::lossForwardBackward(LossKind loss, ActivationKind activation, float alpha,
                                       const Tensor& z, const Tensor& y, const Tensor& labels,
                                       Tensor& dz) {
  const float* p = y.data();
  const float* l = labels.data();
  float* g = dz.data();
  const int64_t n = y.dim(0), k = y.dim(1);
  const bool crossEntropy = loss == LossKind::NEGATIVELOGLIKELIHOOD || loss == LossKind::MCXENT;
  // As in lossGradientWrtOutput: y, labels and dz have one shape, none is without storage.
  // NOLINTBEGIN(clang-analyzer-core.NullDereference)
  if (crossEntropy && activation == ActivationKind::SOFTMAX) {
    // d/dz of -sum(l log softmax(z)) = softmax(z) * sum(l) - l (= y - l for one-hot labels).
    parallelFor(n, [=](int64_t r) {
      float labelSum = 0;
      for (int64_t c = 0; c < k; ++c) labelSum += l[r * k + c];
      for (int64_t c = 0; c < k; ++c) g[r * k + c] = p[r * k + c] * labelSum - l[r * k + c];
    });
  } else if (loss == LossKind::XENT && activation == ActivationKind::SIGMOID) {
    const int64_t total = n * k;
    parallelElements(total, [=](int64_t i) { g[i] = p[i] - l[i]; });
    // NOLINTEND(clang-analyzer-core.NullDereference)
  } else {
    lossGradientWrtOutput(loss, p, l, g, n, k);
    activationBackward(activation, alpha, z, y, dz, dz);
  }
  return lossScore(loss, y, labels);
}

void CpuBackend::movingAverage(Tensor& average, const Tensor& value, float decay) {
  float* a = average.data();
  const float* v = value.data();
  const float keep = decay, take = static_cast<float>(1.0 - double(decay));
  parallelElements(average.numel(), [=](int64_t i) { a[i] = keep * a[i] + take * v[i]; });
}

void CpuBackend::dropoutMask(uint64_t seed, float retainProbability, Tensor& mask) {
  float* m = mask.data();
  const uint32_t threshold = keepThreshold24(retainProbability);
  const float inverse = 1.0f / retainProbability;
  parallelElements(mask.numel(), [=](int64_t i) {
    m[i] = dropoutMaskValue(seed, static_cast<uint64_t>(i), threshold, inverse);
  });
}

void CpuBackend::multiply(const Tensor& x, const Tensor& y, Tensor& z) {
  const float* a = x.data();
  const float* b = y.data();
  float* c = z.data();
  // As in lossGradientWrtOutput: x, y and z have one shape, none is without storage.
  // NOLINTNEXTLINE(clang-analyzer-core.NullDereference)
  parallelElements(z.numel(), [=](int64_t i) { c[i] = a[i] * b[i]; });
}

void CpuBackend::scale(Tensor& y, float a) {
  float* p = y.data();
  const int64_t n = y.numel();
  parallelElements(n, [=](int64_t i) { p[i] *= a; });
}

double CpuBackend::sumOfSquares(const Tensor& x) {
  const float* p = x.data();
  const int64_t n = x.numel();
  return parallelSum(n, [=](int64_t i) { return double(p[i]) * double(p[i]); });
}

double CpuBackend::sumOfAbsolutes(const Tensor& x) {
  const float* p = x.data();
  const int64_t n = x.numel();
  return parallelSum(n, [=](int64_t i) { return double(std::fabs(p[i])); });
}

void CpuBackend::clipByValue(Tensor& y, float threshold) {
  float* p = y.data();
  const int64_t n = y.numel();
  parallelElements(n, [=](int64_t i) { p[i] = std::clamp(p[i], -threshold, threshold); });
}

void CpuBackend::stageBatch(const Tensor& features, const Tensor& labels, Tensor& deviceFeatures,
                            Tensor& deviceLabels) {
  // Host tensors are used in place; anything on a GPU is copied to the host.
  deviceFeatures = features.toHost();
  deviceLabels = labels.toHost();
}

}  // namespace dl4cpp::cpu
