// The CPU backend's element-wise and flat-buffer family (ops/ElementwiseOps.h).
//
// Activations: those without transcendentals run on dl4cpp's loops (Activations.h), which
// allocate nothing per call; the others on oneDNN's eltwise primitives (eltwiseAlgorithm), whose
// JIT kernels vectorise tanh and exp, which plain loops get from GCC only under -ffast-math.
//
// The CPU backend's element-wise work that oneDNN has no primitive for: losses, dropout masks,
// running averages and the reductions and scalings of flat buffers (the updater steps are below).
// Plain loops the compiler vectorises, split across the context's OpenMP threads (ParallelFor.h: no
// parallel region on one thread).
//
// The CPU backend's updater steps over one flat parameter segment (DL4J's updaters and their
// regularisation, in the order DL4J's UpdaterBlock applies them). One plain loop per updater
// kind, which the compiler vectorises, split across the context's OpenMP threads (ParallelFor.h).
// Every constant that depends only on the hyperparameters and the iteration is formed once, in
// double (1.0f - 0.999f is off by 1.3e-5 relative; the step sizes by OpTypes.h's functions, as
// the CUDA backend forms them), and rounded to float.
//
// The CPU backend's ops that only move data: copies and zero padding (and its reverse, the crop of
// the gradient), row by row with memcpy, planes or ranges split across the OpenMP threads.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>

#include "nn/backend/CounterRandom.h"
#include "nn/backend/cpu/Activations.h"
#include "nn/backend/cpu/CpuBackend.h"
#include "nn/backend/cpu/ParallelFor.h"
#include "nn/backend/cpu/onednn/DnnlPrimitives.h"

namespace dl4cpp::cpu {

namespace {

class CpuElementwise final : public ElementwiseImpl {
 public:
  explicit CpuElementwise(CpuBackend& core) : core_(core) {}
  void activationForward(ActivationKind kind, float alpha, const Tensor& x, Tensor& y) override;
  void activationBackward(ActivationKind kind, float alpha, const Tensor& x, const Tensor& y,
                          const Tensor& dy, Tensor& dx) override;
  double lossForwardBackward(LossKind loss, ActivationKind activation, float alpha, const Tensor& z,
                             const Tensor& y, const Tensor& labels, Tensor& dz) override;
  double lossScore(LossKind loss, const Tensor& y, const Tensor& labels) override;
  void updaterStep(const UpdaterParams& u, const RegularizationParams& r, int64_t iteration,
                   Tensor& param, Tensor& grad, Tensor& state) override;
  void movingAverage(Tensor& average, const Tensor& value, float decay) override;
  void dropoutMask(uint64_t seed, float retainProbability, Tensor& mask) override;
  void multiply(const Tensor& x, const Tensor& y, Tensor& z) override;
  void scale(Tensor& y, float a) override;
  void clipByValue(Tensor& y, float threshold) override;
  double sumOfSquares(const Tensor& x) override;
  double sumOfAbsolutes(const Tensor& x) override;
  void zeroPaddingForward(const Tensor& x, Tensor& y, const Padding2d& p) override;
  void zeroPaddingBackward(const Tensor& dy, Tensor& dx, const Padding2d& p) override;
  void copy(const Tensor& src, Tensor& dst) override;
  void stageBatch(const Tensor& features, const Tensor& labels, Tensor& deviceFeatures,
                  Tensor& deviceLabels) override;

 private:
  CpuBackend& core_;
};

}  // namespace

using namespace onednn;  // NOLINT(google-build-using-namespace)

namespace {
// The activations left on oneDNN (those with transcendentals) as its eltwise algorithms. Backward
// reads their output where the *_use_dst_for_bwd form exists, else (activationBackwardNeedsInput)
// their input. SELU is oneDNN's ELU with SELU's alpha, scaled by lambda afterwards.
struct Eltwise {
  dnnl::algorithm algorithm = dnnl::algorithm::undef;
  float alpha = 0.0f;
};
Eltwise eltwiseAlgorithm(ActivationKind kind) {
  switch (kind) {
    case ActivationKind::TANH:
      return {algorithm::eltwise_tanh_use_dst_for_bwd};
    case ActivationKind::SIGMOID:
      return {algorithm::eltwise_logistic_use_dst_for_bwd};
    case ActivationKind::ELU:
      return {algorithm::eltwise_elu_use_dst_for_bwd, 1.0f};
    case ActivationKind::SELU:
      return {algorithm::eltwise_elu, static_cast<float>(kSeluAlpha)};
    case ActivationKind::GELU:
      return {algorithm::eltwise_swish, 1.702f};  // x sigma(1.702 x) is swish with alpha 1.702
    case ActivationKind::GELU_PRECISE:
      return {algorithm::eltwise_gelu_tanh};
    case ActivationKind::SWISH:
      return {algorithm::eltwise_swish, 1.0f};
    case ActivationKind::SOFTPLUS:
      return {algorithm::eltwise_soft_relu};
    default:
      throw BackendError("eltwiseAlgorithm: not a oneDNN eltwise activation");
  }
}

}  // namespace

// --- Activations -----------------------------------------------------------------------------
// The activations without transcendentals run on dl4cpp's loops (Activations.h), which allocate
// nothing per call. The others stay on oneDNN's eltwise primitives (eltwiseAlgorithm): its JIT
// kernels vectorise tanh and exp, which plain loops get from GCC only under -ffast-math.

void CpuElementwise::activationForward(ActivationKind kind, float alpha, const Tensor& x,
                                       Tensor& y) {
  switch (kind) {
    case ActivationKind::IDENTITY:
      if (y.data() != x.data()) y.copyFrom(x);
      return;
    case ActivationKind::RELU:
      reluForward(x, y);
      return;
    case ActivationKind::LEAKYRELU:
      leakyReluForward(alpha, x, y);
      return;
    case ActivationKind::SOFTMAX:
    case ActivationKind::LOGSOFTMAX:
      softmaxForward(x, y, kind == ActivationKind::LOGSOFTMAX);
      return;
    case ActivationKind::HARDTANH:
    case ActivationKind::HARDSIGMOID:
    case ActivationKind::RELU6:
      clippedLinearForward(clippedLinear(kind), x, y);
      return;
    default:
      break;
  }
  const Eltwise eltwise = eltwiseAlgorithm(kind);
  PrimitiveKey key("eltwise_forward");
  key.add(static_cast<int64_t>(kind)).add(y.numel());
  CachedPrimitive& e = core_.cache().get(key, [&] {
    const auto md = flatDesc(y.numel());
    return makeEntry<dnnl::eltwise_forward::primitive_desc, dnnl::eltwise_forward>(
        "eltwise forward",
        [&] {
          dnnl::eltwise_forward::desc desc(prop_kind::forward_training, eltwise.algorithm, md,
                                           eltwise.alpha, 0.0f);
          return dnnl::eltwise_forward::primitive_desc(desc, core_.engine());
        },
        core_.engine(), {{DNNL_ARG_SRC, md}, {DNNL_ARG_DST, md}});
  });
  core_.execute(e, {x.data(), y.data()});
  if (kind == ActivationKind::SELU) scale(y, static_cast<float>(kSeluLambda));
}

void CpuElementwise::activationBackward(ActivationKind kind, float alpha, const Tensor& x,
                                        const Tensor& y, const Tensor& dy, Tensor& dx) {
  switch (kind) {
    case ActivationKind::IDENTITY:
      if (dx.data() != dy.data()) dx.copyFrom(dy);
      return;
    case ActivationKind::RELU:
      reluBackward(0.0f, y, dy, dx);
      return;
    case ActivationKind::LEAKYRELU:
      reluBackward(alpha, y, dy, dx);
      return;
    case ActivationKind::SOFTMAX:
    case ActivationKind::LOGSOFTMAX:
      softmaxBackward(y, dy, dx, kind == ActivationKind::LOGSOFTMAX);
      return;
    case ActivationKind::HARDTANH:
    case ActivationKind::HARDSIGMOID:
    case ActivationKind::RELU6:
      clippedLinearBackward(clippedLinear(kind), y, dy, dx);
      return;
    case ActivationKind::SELU:
      seluBackward(y, dy, dx);
      return;
    default:
      break;
  }
  const Eltwise eltwise = eltwiseAlgorithm(kind);
  // What the algorithm's backward reads: the output (its *_use_dst_for_bwd form) or the input.
  const bool fromInput = activationBackwardNeedsInput(kind);
  const Tensor& read = fromInput ? x : y;
  if (read.numel() != y.numel())
    throw BackendError(
        "activationBackward: this activation's backward pass reads its input x "
        "(activationBackwardNeedsInput), which was not given");
  PrimitiveKey key("eltwise_backward");
  key.add(static_cast<int64_t>(kind)).add(y.numel());
  CachedPrimitive& e = core_.cache().get(key, [&] {
    const auto md = flatDesc(y.numel());
    return makeEntry<dnnl::eltwise_backward::primitive_desc, dnnl::eltwise_backward>(
        "eltwise backward",
        [&] {
          dnnl::eltwise_forward::desc fdesc(prop_kind::forward_training, eltwise.algorithm, md,
                                            eltwise.alpha, 0.0f);
          dnnl::eltwise_forward::primitive_desc hint(fdesc, core_.engine());
          dnnl::eltwise_backward::desc desc(eltwise.algorithm, md, md, eltwise.alpha, 0.0f);
          return dnnl::eltwise_backward::primitive_desc(desc, core_.engine(), hint);
        },
        core_.engine(),
        {{fromInput ? DNNL_ARG_SRC : DNNL_ARG_DST, md},
         {DNNL_ARG_DIFF_DST, md},
         {DNNL_ARG_DIFF_SRC, md}});
  });
  core_.execute(e, {read.data(), dy.data(), dx.data()});
}

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

double CpuElementwise::lossScore(LossKind loss, const Tensor& y, const Tensor& labels) {
  const double sum = lossSum(loss, y.data(), labels.data(), y.numel());
  return lossAveragesOutputs(loss) ? sum / static_cast<double>(y.dim(1)) : sum;
}

double CpuElementwise::lossForwardBackward(LossKind loss, ActivationKind activation, float alpha,
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

void CpuElementwise::movingAverage(Tensor& average, const Tensor& value, float decay) {
  float* a = average.data();
  const float* v = value.data();
  const float keep = decay, take = static_cast<float>(1.0 - double(decay));
  parallelElements(average.numel(), [=](int64_t i) { a[i] = keep * a[i] + take * v[i]; });
}

void CpuElementwise::dropoutMask(uint64_t seed, float retainProbability, Tensor& mask) {
  float* m = mask.data();
  const uint32_t threshold = keepThreshold24(retainProbability);
  const float inverse = 1.0f / retainProbability;
  parallelElements(mask.numel(), [=](int64_t i) {
    m[i] = dropoutMaskValue(seed, static_cast<uint64_t>(i), threshold, inverse);
  });
}

void CpuElementwise::multiply(const Tensor& x, const Tensor& y, Tensor& z) {
  const float* a = x.data();
  const float* b = y.data();
  float* c = z.data();
  // As in lossGradientWrtOutput: x, y and z have one shape, none is without storage.
  // NOLINTNEXTLINE(clang-analyzer-core.NullDereference)
  parallelElements(z.numel(), [=](int64_t i) { c[i] = a[i] * b[i]; });
}

void CpuElementwise::scale(Tensor& y, float a) {
  float* p = y.data();
  const int64_t n = y.numel();
  parallelElements(n, [=](int64_t i) { p[i] *= a; });
}

double CpuElementwise::sumOfSquares(const Tensor& x) {
  const float* p = x.data();
  const int64_t n = x.numel();
  return parallelSum(n, [=](int64_t i) { return double(p[i]) * double(p[i]); });
}

double CpuElementwise::sumOfAbsolutes(const Tensor& x) {
  const float* p = x.data();
  const int64_t n = x.numel();
  return parallelSum(n, [=](int64_t i) { return double(std::fabs(p[i])); });
}

void CpuElementwise::clipByValue(Tensor& y, float threshold) {
  float* p = y.data();
  const int64_t n = y.numel();
  parallelElements(n, [=](int64_t i) { p[i] = std::clamp(p[i], -threshold, threshold); });
}

void CpuElementwise::stageBatch(const Tensor& features, const Tensor& labels,
                                Tensor& deviceFeatures, Tensor& deviceLabels) {
  // Host tensors are used in place; anything on a GPU is copied to the host.
  deviceFeatures = features.toHost();
  deviceLabels = labels.toHost();
}

namespace {

// grad += l1 * sign(param) + l2 * param (DL4J's L1Regularization and L2Regularization, before the
// updater); then, when weight decay applies, param -= decay * param: the decay's share of the
// update, taken first, since no updater reads the parameter.
void regularize(const UpdaterParams& u, const RegularizationParams& r, float* p, float* g,
                int64_t n) {
  const float l1 = static_cast<float>(r.l1), l2 = static_cast<float>(r.l2);
  const float decay = static_cast<float>(weightDecayFactor(u, r));
  if (l1 != 0.0f || l2 != 0.0f) {
    parallelElements(n, [=](int64_t i) {
      const float sign = static_cast<float>((0.0f < p[i]) - (p[i] < 0.0f));
      g[i] += l1 * sign + l2 * p[i];
    });
  }
  if (decay != 0.0f) parallelElements(n, [=](int64_t i) { p[i] -= decay * p[i]; });
}

// The first and second moments of the Adam family: m' = b1 m + c1 g, v' = b2 v + c2 g^2.
inline void updateMoments(float b1, float c1, float b2, float c2, float g, float& m, float& v) {
  m = b1 * m + c1 * g;
  v = b2 * v + c2 * g * g;
}

}  // namespace

void CpuElementwise::updaterStep(const UpdaterParams& u, const RegularizationParams& r,
                                 int64_t iteration, Tensor& param, Tensor& grad, Tensor& state) {
  float* p = param.data();
  float* g = grad.data();
  float* s = state.data();
  const int64_t n = param.numel();
  const float lr = static_cast<float>(u.learningRate);
  const float eps = static_cast<float>(u.epsilon);
  const float b1 = static_cast<float>(u.beta1), b2 = static_cast<float>(u.beta2);
  const float c1 = static_cast<float>(1.0 - u.beta1), c2 = static_cast<float>(1.0 - u.beta2);
  regularize(u, r, p, g, n);
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
      const float alphaT = static_cast<float>(adamStepSize(u, iteration));
      float* m = s;
      float* v = s + n;
      parallelElements(n, [=](int64_t i) {
        updateMoments(b1, c1, b2, c2, g[i], m[i], v[i]);
        p[i] -= alphaT * m[i] / (std::sqrt(v[i]) + eps);
      });
      return;
    }
    case UpdaterKind::RMSPROP: {
      const float rho = static_cast<float>(u.rmsDecay);
      const float c = static_cast<float>(1.0 - u.rmsDecay);
      parallelElements(n, [=](int64_t i) {
        s[i] = rho * s[i] + c * g[i] * g[i];
        p[i] -= lr * g[i] / (std::sqrt(s[i]) + eps);
      });
      return;
    }
    case UpdaterKind::ADAGRAD:
      // ND4J's AdaGrad; state = h, the sum of g^2 from 1e-6 on.
      parallelElements(n, [=](int64_t i) {
        s[i] += g[i] * g[i];
        p[i] -= lr * g[i] / (std::sqrt(s[i]) + eps);
      });
      return;
    case UpdaterKind::ADADELTA: {
      // ND4J's AdaDelta; state = [msg | msdx], the running means of g^2 and of the update^2.
      const float rho = static_cast<float>(u.rho), c = static_cast<float>(1.0 - u.rho);
      float* msg = s;
      float* msdx = s + n;
      parallelElements(n, [=](int64_t i) {
        msg[i] = rho * msg[i] + c * g[i] * g[i];
        const float d = g[i] * (std::sqrt(msdx[i] + eps) / std::sqrt(msg[i] + eps));
        msdx[i] = rho * msdx[i] + c * d * d;
        p[i] -= d;
      });
      return;
    }
    case UpdaterKind::ADAMAX: {
      // ND4J's AdaMax; state = [m | u]. The 1e-32 is ND4J's guard against 0 / 0.
      const float alphaT = static_cast<float>(adaMaxStepSize(u, iteration));
      float* m = s;
      float* w = s + n;
      parallelElements(n, [=](int64_t i) {
        m[i] = b1 * m[i] + c1 * g[i];
        const float decayed = b2 * w[i], magnitude = std::fabs(g[i]);
        w[i] = (decayed < magnitude ? magnitude : decayed) + 1e-32f;
        p[i] -= alphaT * m[i] / w[i];
      });
      return;
    }
    case UpdaterKind::NADAM: {
      // ND4J's Nadam; state = [m | v]. Step: lr (b1 m' + (1-b1) g) / (1 - b1^t) / (sqrt(v') + eps).
      const float am = static_cast<float>(nadamMomentumScale(u, iteration));
      const float ag = static_cast<float>(nadamGradientScale(u, iteration));
      float* m = s;
      float* v = s + n;
      parallelElements(n, [=](int64_t i) {
        updateMoments(b1, c1, b2, c2, g[i], m[i], v[i]);
        p[i] -= (am * m[i] + ag * g[i]) / (std::sqrt(v[i]) + eps);
      });
      return;
    }
    case UpdaterKind::AMSGRAD: {
      // ND4J's AMSGrad; state = [m | v | vHat], Adam's step with vHat = max(vHat, v') for v'.
      const float alphaT = static_cast<float>(adamStepSize(u, iteration));
      float* m = s;
      float* v = s + n;
      float* vHat = s + 2 * n;
      parallelElements(n, [=](int64_t i) {
        updateMoments(b1, c1, b2, c2, g[i], m[i], v[i]);
        vHat[i] = vHat[i] < v[i] ? v[i] : vHat[i];
        p[i] -= alphaT * m[i] / (std::sqrt(vHat[i]) + eps);
      });
      return;
    }
  }
}

namespace {

// One (n, c) plane: `x` (height, width) into `y` (height + top + bottom, width + left + right).
void padPlane(const float* x, float* y, int64_t height, int64_t width, const Padding2d& p) {
  const int64_t outW = width + p.left + p.right;
  std::fill(y, y + p.top * outW, 0.0f);
  float* row = y + p.top * outW;
  for (int64_t h = 0; h < height; ++h, row += outW) {
    std::fill(row, row + p.left, 0.0f);
    std::memcpy(row + p.left, x + h * width, static_cast<size_t>(width) * sizeof(float));
    std::fill(row + p.left + width, row + outW, 0.0f);
  }
  std::fill(row, row + p.bottom * outW, 0.0f);
}

// The inverse: the (height, width) interior of a padded plane `dy` into `dx`.
void cropPlane(const float* dy, float* dx, int64_t height, int64_t width, const Padding2d& p) {
  const int64_t outW = width + p.left + p.right;
  for (int64_t h = 0; h < height; ++h)
    std::memcpy(dx + h * width, dy + (h + p.top) * outW + p.left,
                static_cast<size_t>(width) * sizeof(float));
}

}  // namespace

void CpuElementwise::zeroPaddingForward(const Tensor& x, Tensor& y, const Padding2d& p) {
  if (x.numel() == 0 || y.numel() == 0) return;
  const float* in = x.data();
  float* out = y.data();
  const int64_t height = x.dim(2), width = x.dim(3);
  const int64_t inPlane = height * width, outPlane = y.dim(2) * y.dim(3);
  parallelFor(x.dim(0) * x.dim(1), [=](int64_t plane) {
    padPlane(in + plane * inPlane, out + plane * outPlane, height, width, p);
  });
}

void CpuElementwise::zeroPaddingBackward(const Tensor& dy, Tensor& dx, const Padding2d& p) {
  if (dy.numel() == 0 || dx.numel() == 0) return;
  const float* in = dy.data();
  float* out = dx.data();
  const int64_t height = dx.dim(2), width = dx.dim(3);
  const int64_t inPlane = dy.dim(2) * dy.dim(3), outPlane = height * width;
  parallelFor(dx.dim(0) * dx.dim(1), [=](int64_t plane) {
    cropPlane(in + plane * inPlane, out + plane * outPlane, height, width, p);
  });
}

void CpuElementwise::copy(const Tensor& src, Tensor& dst) {
  if (src.numel() == 0 || dst.numel() == 0) return;
  const float* in = src.data();
  float* out = dst.data();
  parallelRanges(src.numel(), [=](int64_t begin, int64_t end) {
    std::memcpy(out + begin, in + begin, static_cast<size_t>(end - begin) * sizeof(float));
  });
}

std::unique_ptr<ElementwiseImpl> makeCpuElementwise(CpuBackend& core) {
  return std::make_unique<CpuElementwise>(core);
}

}  // namespace dl4cpp::cpu
