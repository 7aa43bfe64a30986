// The CPU backend's element-wise work that oneDNN has no primitive for: losses and the updater
// steps over flat buffers. Plain loops the compiler vectorises, split across the context's OpenMP
// threads (ParallelFor.h: no parallel region on one thread).
#include <dl4cpp/nn/backend/CounterRandom.h>
#include <dl4cpp/nn/backend/cpu/CpuBackend.h>
#include <dl4cpp/nn/backend/cpu/ParallelFor.h>

#include <algorithm>
#include <cmath>

namespace dl4cpp::cpu {

namespace {
constexpr float kLogClip = 1e-10f;  // DL4J LossMCXENT's softmax clip
constexpr float kXentClip = 1e-5f;  // DL4J LossBinaryXENT's clip

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
  }
  // NOLINTEND(clang-analyzer-core.NullDereference,clang-analyzer-core.NonNullParamChecker)
}
}  // namespace

double CpuBackend::lossScore(LossKind loss, const Tensor& y, const Tensor& labels) {
  const float* p = y.data();
  const float* l = labels.data();
  const int64_t total = y.numel();
  const int64_t k = y.dim(1);
  switch (loss) {
    case LossKind::MSE:
      return parallelSum(total,
                         [=](int64_t i) { return double(p[i] - l[i]) * double(p[i] - l[i]); }) /
             static_cast<double>(k);
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
  }
  return 0;
}

double CpuBackend::lossForwardBackward(LossKind loss, ActivationKind activation, float alpha,
                                       const Tensor& y, const Tensor& labels, Tensor& dz) {
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
    activationBackward(activation, alpha, y, dz, dz);
  }
  return lossScore(loss, y, labels);
}

void CpuBackend::updaterStep(const UpdaterParams& u, double l2, int64_t iteration, Tensor& param,
                             Tensor& grad, Tensor& state) {
  float* p = param.data();
  float* g = grad.data();
  float* s = state.data();
  const int64_t n = param.numel();
  const float lr = static_cast<float>(u.learningRate);
  const float decay = static_cast<float>(l2);
  if (decay != 0.0f) {
    parallelElements(n, [=](int64_t i) { g[i] += decay * p[i]; });
  }
  switch (u.kind) {
    case UpdaterKind::NOOP:
      return;
    case UpdaterKind::SGD:
      parallelElements(n, [=](int64_t i) { p[i] -= lr * g[i]; });
      return;
    case UpdaterKind::NESTEROVS: {
      // v' = mu v - lr g;  p += (1 + mu) v' - mu v   (DL4J's Nesterovs, state = v)
      const float mu = static_cast<float>(u.momentum);
      parallelElements(n, [=](int64_t i) {
        const float vPrev = s[i];
        const float v = mu * vPrev - lr * g[i];
        s[i] = v;
        p[i] += (1.0f + mu) * v - mu * vPrev;
      });
      return;
    }
    case UpdaterKind::ADAM: {
      // DL4J's Adam: bias correction folded into the step size; state = [m | v].
      const double t = static_cast<double>(iteration + 1);
      const float b1 = static_cast<float>(u.beta1), b2 = static_cast<float>(u.beta2);
      const float eps = static_cast<float>(u.epsilon);
      // 1 - beta in double: 1.0f - 0.999f is off by 1.3e-5 relative.
      const float c1 = static_cast<float>(1.0 - u.beta1), c2 = static_cast<float>(1.0 - u.beta2);
      const float alphaT = static_cast<float>(
          u.learningRate * std::sqrt(1.0 - std::pow(u.beta2, t)) / (1.0 - std::pow(u.beta1, t)));
      float* m = s;
      float* v = s + n;
      parallelElements(n, [=](int64_t i) {
        m[i] = b1 * m[i] + c1 * g[i];
        v[i] = b2 * v[i] + c2 * g[i] * g[i];
        p[i] -= alphaT * m[i] / (std::sqrt(v[i]) + eps);
      });
      return;
    }
    case UpdaterKind::RMSPROP: {
      const float rho = static_cast<float>(u.rmsDecay), eps = static_cast<float>(u.epsilon);
      const float c = static_cast<float>(1.0 - u.rmsDecay);
      parallelElements(n, [=](int64_t i) {
        s[i] = rho * s[i] + c * g[i] * g[i];
        p[i] -= lr * g[i] / (std::sqrt(s[i]) + eps);
      });
      return;
    }
  }
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

void CpuBackend::stageBatch(const Tensor& features, const Tensor& labels, Tensor& deviceFeatures,
                            Tensor& deviceLabels) {
  // Host tensors are used in place; anything on a GPU is copied to the host.
  deviceFeatures = features.toHost();
  deviceLabels = labels.toHost();
}

}  // namespace dl4cpp::cpu
