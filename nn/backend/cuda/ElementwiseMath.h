#pragma once
// The per-element (and per-row) formulas of the CUDA backend's activations, softmax, losses and
// updater steps: the same expressions as CpuElementwise.cpp / oneDNN's definitions (same clips, NaN
// propagation, 1 - beta in double). Compiled by nvcc for the kernels (thin grid-stride loops
// around these) and by the host compiler for test/cuda/ElementwiseMathTest.cpp, which checks
// them against the CPU backend without a GPU.
#include <math.h>

#include <cmath>
#include <cstdint>

#include "nn/backend/OpTypes.h"
#include "nn/backend/cuda/WindowIndexing.h"  // DL4CPP_HOST_DEVICE

namespace dl4cpp::cuda {

constexpr float kLogClip = 1e-10f;  // DL4J LossMCXENT's softmax clip
constexpr float kXentClip = 1e-5f;  // DL4J LossBinaryXENT's clip
constexpr float kKldClip = 1e-5f;   // DL4J LossKLD's clip (Nd4j.EPS_THRESHOLD)

// std::clamp's semantics, NaN included (a NaN stays NaN, so a diverged model is still detected).
DL4CPP_HOST_DEVICE inline float clampTo(float v, float lo, float hi) {
  return v < lo ? lo : (hi < v ? hi : v);
}

DL4CPP_HOST_DEVICE inline float sigmoid(float v) { return 1.0f / (1.0f + expf(-v)); }

// min(max(scale * v + shift, low), high): HARDTANH, HARDSIGMOID, RELU6.
struct ClippedLinear {
  float scale, shift, low, high;
};
DL4CPP_HOST_DEVICE inline ClippedLinear clippedLinear(ActivationKind kind) {
  switch (kind) {
    case ActivationKind::HARDSIGMOID:
      return {0.2f, 0.5f, 0.0f, 1.0f};
    case ActivationKind::RELU6:
      return {1.0f, 0.0f, 0.0f, 6.0f};
    default:  // HARDTANH
      return {1.0f, 0.0f, -1.0f, 1.0f};
  }
}

// sqrt(2 / pi) and GELU_PRECISE's cubic coefficient.
constexpr float kGeluScale = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

DL4CPP_HOST_DEVICE inline float activate(ActivationKind kind, float alpha, float v) {
  switch (kind) {
    case ActivationKind::RELU:
      return v > 0.0f ? v : 0.0f;
    case ActivationKind::LEAKYRELU:
      return v > 0.0f ? v : alpha * v;
    case ActivationKind::TANH:
      return tanhf(v);
    case ActivationKind::SIGMOID:
      return sigmoid(v);
    case ActivationKind::ELU:
      return v > 0.0f ? v : expm1f(v);
    case ActivationKind::SELU:
      return static_cast<float>(kSeluLambda) *
             (v > 0.0f ? v : static_cast<float>(kSeluAlpha) * expm1f(v));
    case ActivationKind::GELU:
      return v * sigmoid(1.702f * v);
    case ActivationKind::GELU_PRECISE:
      return 0.5f * v * (1.0f + tanhf(kGeluScale * (v + kGeluCubic * v * v * v)));
    case ActivationKind::SWISH:
      return v * sigmoid(v);
    case ActivationKind::SOFTPLUS:  // log(1 + e^v) without overflow for large v
      return v > 0.0f ? v + log1pf(expf(-v)) : log1pf(expf(v));
    case ActivationKind::HARDTANH:
    case ActivationKind::HARDSIGMOID:
    case ActivationKind::RELU6: {
      const ClippedLinear f = clippedLinear(kind);
      return fminf(fmaxf(f.scale * v + f.shift, f.low), f.high);
    }
    default:
      return v;  // IDENTITY; SOFTMAX and LOGSOFTMAX are row-wise (softmaxLine, logSoftmaxLine)
  }
}

// f'(x) * dy, from the output y = f(x), or, where activationBackwardNeedsInput(kind), from x.
DL4CPP_HOST_DEVICE inline float activateBackward(ActivationKind kind, float alpha, float x, float y,
                                                 float dy) {
  switch (kind) {
    case ActivationKind::RELU:
      return y > 0.0f ? dy : 0.0f;
    case ActivationKind::LEAKYRELU:
      return y > 0.0f ? dy : alpha * dy;
    case ActivationKind::TANH:
      return dy * (1.0f - y * y);
    case ActivationKind::SIGMOID:
      return dy * y * (1.0f - y);
    case ActivationKind::ELU:
      return y > 0.0f ? dy : dy * (y + 1.0f);
    case ActivationKind::SELU:
      return dy * (y > 0.0f ? static_cast<float>(kSeluLambda)
                            : y + static_cast<float>(kSeluLambda * kSeluAlpha));
    case ActivationKind::GELU: {
      const float s = sigmoid(1.702f * x);
      return dy * (s + 1.702f * x * s * (1.0f - s));
    }
    case ActivationKind::GELU_PRECISE: {
      const float t = tanhf(kGeluScale * (x + kGeluCubic * x * x * x));
      const float du = kGeluScale * (1.0f + 3.0f * kGeluCubic * x * x);
      return dy * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * du);
    }
    case ActivationKind::SWISH: {
      const float s = sigmoid(x);
      return dy * (s + x * s * (1.0f - s));
    }
    case ActivationKind::SOFTPLUS:
      return dy * sigmoid(x);
    case ActivationKind::HARDTANH:
    case ActivationKind::HARDSIGMOID:
    case ActivationKind::RELU6: {
      const ClippedLinear f = clippedLinear(kind);
      return y > f.low && y < f.high ? f.scale * dy : 0.0f;
    }
    default:
      return dy;
  }
}

// One softmax line (SoftmaxLines.h): y = exp(x - max) / sum. y may alias x (each x is read before
// its y is written).
DL4CPP_HOST_DEVICE inline void softmaxLine(const float* x, float* y, int64_t channels,
                                           int64_t stride) {
  float largest = x[0];
  for (int64_t c = 1; c < channels; ++c) largest = fmaxf(largest, x[c * stride]);
  float sum = 0.0f;
  for (int64_t c = 0; c < channels; ++c) {
    y[c * stride] = expf(x[c * stride] - largest);
    sum += y[c * stride];
  }
  for (int64_t c = 0; c < channels; ++c) y[c * stride] /= sum;
}

// dx = y * (dy - sum(dy * y)) over one line; dx may alias dy (the dot is formed before any write).
DL4CPP_HOST_DEVICE inline void softmaxBackwardLine(const float* y, const float* dy, float* dx,
                                                   int64_t channels, int64_t stride) {
  float dot = 0.0f;
  for (int64_t c = 0; c < channels; ++c) dot += dy[c * stride] * y[c * stride];
  for (int64_t c = 0; c < channels; ++c) dx[c * stride] = y[c * stride] * (dy[c * stride] - dot);
}

// One log-softmax line: y = x - max - log(sum exp(x - max)). y may alias x (the sums are formed
// before any write, each y from its own x).
DL4CPP_HOST_DEVICE inline void logSoftmaxLine(const float* x, float* y, int64_t channels,
                                              int64_t stride) {
  float largest = x[0];
  for (int64_t c = 1; c < channels; ++c) largest = fmaxf(largest, x[c * stride]);
  float sum = 0.0f;
  for (int64_t c = 0; c < channels; ++c) sum += expf(x[c * stride] - largest);
  // x - max first: exact for values of one magnitude (near 1000, say), then the small log.
  const float logSum = logf(sum);
  for (int64_t c = 0; c < channels; ++c) y[c * stride] = (x[c * stride] - largest) - logSum;
}

// dx = dy - exp(y) * sum(dy) over one line; dx may alias dy (the sum is formed before any write).
DL4CPP_HOST_DEVICE inline void logSoftmaxBackwardLine(const float* y, const float* dy, float* dx,
                                                      int64_t channels, int64_t stride) {
  float sum = 0.0f;
  for (int64_t c = 0; c < channels; ++c) sum += dy[c * stride];
  for (int64_t c = 0; c < channels; ++c)
    dx[c * stride] = dy[c * stride] - expf(y[c * stride]) * sum;
}

// d/dz of -sum(l log softmax(z)) = softmax(z) * sum(l) - l, over one row.
DL4CPP_HOST_DEVICE inline void softmaxCrossEntropyGradientRow(const float* p, const float* l,
                                                              float* g, int64_t k) {
  float labelSum = 0.0f;
  for (int64_t c = 0; c < k; ++c) labelSum += l[c];
  for (int64_t c = 0; c < k; ++c) g[c] = p[c] * labelSum - l[c];
}

// sign(v): -1, 0 or 1.
DL4CPP_HOST_DEVICE inline float sign(float v) {
  return static_cast<float>(v > 0.0f) - static_cast<float>(v < 0.0f);
}

// dL/dy of one element for losses without a fused gradient (k: columns, for MSE's and MAE's mean).
DL4CPP_HOST_DEVICE inline float lossGradient(LossKind loss, float y, float l, int64_t k) {
  switch (loss) {
    case LossKind::MSE:
      return 2.0f * (y - l) / static_cast<float>(k);
    case LossKind::NEGATIVELOGLIKELIHOOD:
    case LossKind::MCXENT:
      return -l / clampTo(y, kLogClip, 1.0f);
    case LossKind::XENT: {
      const float q = clampTo(y, kXentClip, 1.0f - kXentClip);
      return -(l / q - (1.0f - l) / (1.0f - q));
    }
    case LossKind::MEAN_ABSOLUTE_ERROR:
      return sign(y - l) / static_cast<float>(k);
    case LossKind::L1:
      return sign(y - l);
    case LossKind::L2:
      return 2.0f * (y - l);
    case LossKind::HINGE:
      return 1.0f - l * y > 0.0f ? -l : 0.0f;
    case LossKind::SQUARED_HINGE: {
      const float margin = 1.0f - l * y;
      return margin > 0.0f ? -2.0f * l * margin : 0.0f;
    }
    case LossKind::KL_DIVERGENCE:  // the clipped score's derivative, as on the CPU
      return -clampTo(l, kKldClip, 1.0f) / clampTo(y, kKldClip, 1.0f);
  }
  return 0.0f;
}

// One element's term of the summed loss (the division by k of lossAveragesOutputs is applied to
// the sum).
DL4CPP_HOST_DEVICE inline double lossTerm(LossKind loss, float p, float l) {
  switch (loss) {
    case LossKind::MSE:
    case LossKind::L2:
      return double(p - l) * double(p - l);
    case LossKind::NEGATIVELOGLIKELIHOOD:
    case LossKind::MCXENT:
      return -(double(l) * logf(clampTo(p, kLogClip, 1.0f)));
    case LossKind::XENT: {
      const float q = clampTo(p, kXentClip, 1.0f - kXentClip);
      return -(double(l) * logf(q) + double(1.0f - l) * logf(1.0f - q));
    }
    case LossKind::MEAN_ABSOLUTE_ERROR:
    case LossKind::L1:
      return fabs(double(p - l));
    case LossKind::HINGE:
      return fmax(0.0, 1.0 - double(l) * p);
    case LossKind::SQUARED_HINGE: {
      const double margin = fmax(0.0, 1.0 - double(l) * p);
      return margin * margin;
    }
    case LossKind::KL_DIVERGENCE: {
      const float q = clampTo(l, kKldClip, 1.0f);
      return double(q) * logf(q / clampTo(p, kKldClip, 1.0f));
    }
  }
  return 0.0;
}

// Host-computed float constants of one updater step (as CpuElementwise.cpp forms them).
struct UpdaterArgs {
  UpdaterKind kind;
  float lr;
  float l1, l2, decay;           // regularisation: decay is weightDecayFactor()
  float mu;                      // Nesterovs
  float b1, b2, c1, c2, alphaT;  // Adam family (alphaT: AdaMax's and AMSGrad's too)
  float nadamM, nadamG;          // Nadam's nadamMomentumScale, nadamGradientScale
  float rho, c;                  // RmsProp, AdaDelta
  float eps;
};

inline UpdaterArgs updaterArgs(const UpdaterParams& u, const RegularizationParams& r,
                               int64_t iteration) {
  UpdaterArgs a{};
  a.kind = u.kind;
  a.lr = static_cast<float>(u.learningRate);
  a.l1 = static_cast<float>(r.l1);
  a.l2 = static_cast<float>(r.l2);
  a.decay = static_cast<float>(weightDecayFactor(u, r));
  a.mu = static_cast<float>(u.momentum);
  a.b1 = static_cast<float>(u.beta1);
  a.b2 = static_cast<float>(u.beta2);
  // 1 - beta in double, as on the CPU: 1.0f - 0.999f is off by 1.3e-5 relative.
  a.c1 = static_cast<float>(1.0 - u.beta1);
  a.c2 = static_cast<float>(1.0 - u.beta2);
  switch (u.kind) {
    case UpdaterKind::ADAM:  // DL4J's Adam: bias correction folded into the step size
    case UpdaterKind::AMSGRAD:
      a.alphaT = static_cast<float>(adamStepSize(u, iteration));
      break;
    case UpdaterKind::ADAMAX:
      a.alphaT = static_cast<float>(adaMaxStepSize(u, iteration));
      break;
    case UpdaterKind::NADAM:
      a.nadamM = static_cast<float>(nadamMomentumScale(u, iteration));
      a.nadamG = static_cast<float>(nadamGradientScale(u, iteration));
      break;
    default:
      break;
  }
  const double rho = u.kind == UpdaterKind::ADADELTA ? u.rho : u.rmsDecay;
  a.rho = static_cast<float>(rho);
  a.c = static_cast<float>(1.0 - rho);
  a.eps = static_cast<float>(u.epsilon);
  return a;
}

// The first and second moments of the Adam family: m' = b1 m + c1 g, v' = b2 v + c2 g^2.
DL4CPP_HOST_DEVICE inline void updateMoments(const UpdaterArgs& a, float g, float& m, float& v) {
  m = a.b1 * m + a.c1 * g;
  v = a.b2 * v + a.c2 * g * g;
}

// Element i of one updater step over a segment of n parameters (state: n floats per state slot,
// in ND4J's order): l1 and l2 into the gradient first, weight decay's share of the update next,
// then the updater's.
DL4CPP_HOST_DEVICE inline void updaterElement(const UpdaterArgs& a, float* p, float* g, float* s,
                                              int64_t i, int64_t n) {
  if (a.l1 != 0.0f || a.l2 != 0.0f) {
    const float sign = static_cast<float>((0.0f < p[i]) - (p[i] < 0.0f));
    g[i] += a.l1 * sign + a.l2 * p[i];
  }
  if (a.decay != 0.0f) p[i] -= a.decay * p[i];
  const float gi = g[i];
  switch (a.kind) {
    case UpdaterKind::NOOP:
      break;
    case UpdaterKind::SGD:
      p[i] -= a.lr * gi;
      break;
    case UpdaterKind::NESTEROVS: {  // v' = mu v - lr g;  p += (1 + mu) v' - mu v
      const float vPrev = s[i];
      const float v = a.mu * vPrev - a.lr * gi;
      s[i] = v;
      p[i] += (1.0f + a.mu) * v - a.mu * vPrev;
      break;
    }
    case UpdaterKind::ADAM: {
      float* m = s;
      float* v = s + n;
      updateMoments(a, gi, m[i], v[i]);
      p[i] -= a.alphaT * m[i] / (sqrtf(v[i]) + a.eps);
      break;
    }
    case UpdaterKind::RMSPROP:
      s[i] = a.rho * s[i] + a.c * gi * gi;
      p[i] -= a.lr * gi / (sqrtf(s[i]) + a.eps);
      break;
    case UpdaterKind::ADAGRAD:
      s[i] += gi * gi;
      p[i] -= a.lr * gi / (sqrtf(s[i]) + a.eps);
      break;
    case UpdaterKind::ADADELTA: {
      float* msg = s;
      float* msdx = s + n;
      msg[i] = a.rho * msg[i] + a.c * gi * gi;
      const float d = gi * (sqrtf(msdx[i] + a.eps) / sqrtf(msg[i] + a.eps));
      msdx[i] = a.rho * msdx[i] + a.c * d * d;
      p[i] -= d;
      break;
    }
    case UpdaterKind::ADAMAX: {  // the 1e-32 is ND4J's guard against 0 / 0
      float* m = s;
      float* w = s + n;
      m[i] = a.b1 * m[i] + a.c1 * gi;
      const float decayed = a.b2 * w[i], magnitude = fabsf(gi);
      w[i] = (decayed < magnitude ? magnitude : decayed) + 1e-32f;
      p[i] -= a.alphaT * m[i] / w[i];
      break;
    }
    case UpdaterKind::NADAM: {
      float* m = s;
      float* v = s + n;
      updateMoments(a, gi, m[i], v[i]);
      p[i] -= (a.nadamM * m[i] + a.nadamG * gi) / (sqrtf(v[i]) + a.eps);
      break;
    }
    case UpdaterKind::AMSGRAD: {
      float* m = s;
      float* v = s + n;
      float* vHat = s + 2 * n;
      updateMoments(a, gi, m[i], v[i]);
      vHat[i] = vHat[i] < v[i] ? v[i] : vHat[i];
      p[i] -= a.alphaT * m[i] / (sqrtf(vHat[i]) + a.eps);
      break;
    }
  }
}

// DL4J's ClipElementWiseAbsoluteValue of one element (NaN stays NaN).
DL4CPP_HOST_DEVICE inline float clipElement(float v, float threshold) {
  return clampTo(v, -threshold, threshold);
}

}  // namespace dl4cpp::cuda
