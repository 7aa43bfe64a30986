// The CPU backend's updater steps over one flat parameter segment (DL4J's updaters and their
// regularisation, in the order DL4J's UpdaterBlock applies them). One plain loop per updater
// kind, which the compiler vectorises, split across the context's OpenMP threads (ParallelFor.h).
// Every constant that depends only on the hyperparameters and the iteration is formed once, in
// double (1.0f - 0.999f is off by 1.3e-5 relative; the step sizes by OpTypes.h's functions, as
// the CUDA backend forms them), and rounded to float.
#include <cmath>

#include "nn/backend/cpu/CpuBackend.h"
#include "nn/backend/cpu/ParallelFor.h"

namespace dl4cpp::cpu {

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

void CpuBackend::updaterStep(const UpdaterParams& u, const RegularizationParams& r,
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

}  // namespace dl4cpp::cpu
