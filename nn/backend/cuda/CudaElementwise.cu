// The CUDA backend's element-wise work: activations, softmax, losses, updater steps, scaling and
// sums of squares. Each mirrors CpuFlatOps.cpp / oneDNN's definition line for line (same clips,
// same order of operations); sums are formed in double by CUB.
#include <dl4cpp/nn/backend/cuda/CudaBackend.h>

#include <algorithm>
#include <cmath>

#include <dl4cpp/nn/backend/cuda/CudaCheck.h>
#include <dl4cpp/nn/backend/cuda/Launch.h>

namespace dl4cpp::cuda {

namespace {

constexpr float kLogClip = 1e-10f;  // DL4J LossMCXENT's softmax clip
constexpr float kXentClip = 1e-5f;  // DL4J LossBinaryXENT's clip

// std::clamp's semantics, NaN included (a NaN stays NaN, so a diverged model is still detected).
__device__ float clampTo(float v, float lo, float hi) { return v < lo ? lo : (hi < v ? hi : v); }

__device__ float activate(ActivationKind kind, float alpha, float v) {
  switch (kind) {
    case ActivationKind::RELU: return v > 0.0f ? v : 0.0f;
    case ActivationKind::LEAKYRELU: return v > 0.0f ? v : alpha * v;
    case ActivationKind::TANH: return tanhf(v);
    case ActivationKind::SIGMOID: return 1.0f / (1.0f + expf(-v));
    default: return v;  // IDENTITY; SOFTMAX has its own kernel
  }
}

// f'(z) * dy from the output y = f(z).
__device__ float activateBackward(ActivationKind kind, float alpha, float y, float dy) {
  switch (kind) {
    case ActivationKind::RELU: return y > 0.0f ? dy : 0.0f;
    case ActivationKind::LEAKYRELU: return y > 0.0f ? dy : alpha * dy;
    case ActivationKind::TANH: return dy * (1.0f - y * y);
    case ActivationKind::SIGMOID: return dy * y * (1.0f - y);
    default: return dy;
  }
}

__global__ void activationForwardKernel(ActivationKind kind, float alpha, float* y, int64_t n) {
  DL4CPP_GRID_STRIDE_LOOP(i, n) y[i] = activate(kind, alpha, y[i]);
}

__global__ void activationBackwardKernel(ActivationKind kind, float alpha, const float* y,
                                         const float* dy, float* dx, int64_t n) {
  DL4CPP_GRID_STRIDE_LOOP(i, n) dx[i] = activateBackward(kind, alpha, y[i], dy[i]);
}

// One thread per row of a (rows, k) tensor: output layers have few classes, and a row stays in
// one thread's registers/L1.
__global__ void softmaxForwardKernel(float* y, int64_t rows, int64_t k) {
  DL4CPP_GRID_STRIDE_LOOP(r, rows) {
    float* row = y + r * k;
    float largest = row[0];
    for (int64_t c = 1; c < k; ++c) largest = fmaxf(largest, row[c]);
    float sum = 0.0f;
    for (int64_t c = 0; c < k; ++c) {
      row[c] = expf(row[c] - largest);
      sum += row[c];
    }
    for (int64_t c = 0; c < k; ++c) row[c] /= sum;
  }
}

// dx = y * (dy - sum(dy * y)) per row; dx may alias dy (the dot is formed before any write).
__global__ void softmaxBackwardKernel(const float* y, const float* dy, float* dx, int64_t rows,
                                      int64_t k) {
  DL4CPP_GRID_STRIDE_LOOP(r, rows) {
    const int64_t base = r * k;
    float dot = 0.0f;
    for (int64_t c = 0; c < k; ++c) dot += dy[base + c] * y[base + c];
    for (int64_t c = 0; c < k; ++c) dx[base + c] = y[base + c] * (dy[base + c] - dot);
  }
}

// d/dz of -sum(l log softmax(z)) = softmax(z) * sum(l) - l.
__global__ void softmaxCrossEntropyGradientKernel(const float* p, const float* l, float* g,
                                                  int64_t rows, int64_t k) {
  DL4CPP_GRID_STRIDE_LOOP(r, rows) {
    const int64_t base = r * k;
    float labelSum = 0.0f;
    for (int64_t c = 0; c < k; ++c) labelSum += l[base + c];
    for (int64_t c = 0; c < k; ++c) g[base + c] = p[base + c] * labelSum - l[base + c];
  }
}

__global__ void differenceKernel(const float* p, const float* l, float* g, int64_t n) {
  DL4CPP_GRID_STRIDE_LOOP(i, n) g[i] = p[i] - l[i];
}

// dL/dy for losses without a fused gradient.
__global__ void lossGradientKernel(LossKind loss, const float* y, const float* l, float* g,
                                   int64_t n, int64_t k) {
  DL4CPP_GRID_STRIDE_LOOP(i, n) {
    switch (loss) {
      case LossKind::MSE: g[i] = 2.0f * (y[i] - l[i]) / static_cast<float>(k); break;
      case LossKind::NEGATIVELOGLIKELIHOOD:
      case LossKind::MCXENT: g[i] = -l[i] / clampTo(y[i], kLogClip, 1.0f); break;
      case LossKind::XENT: {
        const float q = clampTo(y[i], kXentClip, 1.0f - kXentClip);
        g[i] = -(l[i] / q - (1.0f - l[i]) / (1.0f - q));
        break;
      }
    }
  }
}

// Per-element loss terms in double, summed by CUB (the MSE division by k happens on the host).
__global__ void lossTermsKernel(LossKind loss, const float* p, const float* l, double* terms,
                                int64_t n) {
  DL4CPP_GRID_STRIDE_LOOP(i, n) {
    switch (loss) {
      case LossKind::MSE: terms[i] = double(p[i] - l[i]) * double(p[i] - l[i]); break;
      case LossKind::NEGATIVELOGLIKELIHOOD:
      case LossKind::MCXENT: terms[i] = -(double(l[i]) * logf(clampTo(p[i], kLogClip, 1.0f))); break;
      case LossKind::XENT: {
        const float q = clampTo(p[i], kXentClip, 1.0f - kXentClip);
        terms[i] = -(double(l[i]) * logf(q) + double(1.0f - l[i]) * logf(1.0f - q));
        break;
      }
    }
  }
}

__global__ void squaresKernel(const float* x, double* terms, int64_t n) {
  DL4CPP_GRID_STRIDE_LOOP(i, n) terms[i] = double(x[i]) * double(x[i]);
}

__global__ void scaleKernel(float* y, float a, int64_t n) {
  DL4CPP_GRID_STRIDE_LOOP(i, n) y[i] *= a;
}

// Host-computed constants of one updater step (all float, as on the CPU).
struct UpdaterArgs {
  UpdaterKind kind;
  float lr, decay;
  float mu;                     // Nesterovs
  float b1, b2, c1, c2, alphaT;  // Adam
  float rho, c;                 // RmsProp
  float eps;
};

__global__ void updaterKernel(UpdaterArgs a, float* p, float* g, float* s, int64_t n) {
  DL4CPP_GRID_STRIDE_LOOP(i, n) {
    if (a.decay != 0.0f) g[i] += a.decay * p[i];  // l2 goes into the gradient first
    const float gi = g[i];
    switch (a.kind) {
      case UpdaterKind::NOOP: break;
      case UpdaterKind::SGD: p[i] -= a.lr * gi; break;
      case UpdaterKind::NESTEROVS: {  // v' = mu v - lr g;  p += (1 + mu) v' - mu v
        const float vPrev = s[i];
        const float v = a.mu * vPrev - a.lr * gi;
        s[i] = v;
        p[i] += (1.0f + a.mu) * v - a.mu * vPrev;
        break;
      }
      case UpdaterKind::ADAM: {  // state = [m | v]
        float* m = s;
        float* v = s + n;
        m[i] = a.b1 * m[i] + a.c1 * gi;
        v[i] = a.b2 * v[i] + a.c2 * gi * gi;
        p[i] -= a.alphaT * m[i] / (sqrtf(v[i]) + a.eps);
        break;
      }
      case UpdaterKind::RMSPROP:
        s[i] = a.rho * s[i] + a.c * gi * gi;
        p[i] -= a.lr * gi / (sqrtf(s[i]) + a.eps);
        break;
    }
  }
}

}  // namespace

void CudaBackend::activationForward(ActivationKind kind, float alpha, Tensor& y) {
  const int64_t n = y.numel();
  if (kind == ActivationKind::IDENTITY || n == 0) return;
  if (kind == ActivationKind::SOFTMAX) {
    const int64_t rows = y.dim(0), k = n / rows;
    softmaxForwardKernel<<<blocksFor(rows), kThreadsPerBlock, 0, stream_>>>(y.data(), rows, k);
  } else {
    activationForwardKernel<<<blocksFor(n), kThreadsPerBlock, 0, stream_>>>(kind, alpha, y.data(), n);
  }
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaBackend::activationBackward(ActivationKind kind, float alpha, const Tensor& y,
                                     const Tensor& dy, Tensor& dx) {
  const int64_t n = y.numel();
  if (n == 0) return;
  if (kind == ActivationKind::IDENTITY) {
    if (dx.data() != dy.data())
      DL4CPP_CUDA_CHECK(cudaMemcpyAsync(dx.data(), dy.data(), static_cast<size_t>(n) * sizeof(float),
                                        cudaMemcpyDeviceToDevice, stream_));
    return;
  }
  if (kind == ActivationKind::SOFTMAX) {
    const int64_t rows = y.dim(0), k = n / rows;
    softmaxBackwardKernel<<<blocksFor(rows), kThreadsPerBlock, 0, stream_>>>(y.data(), dy.data(),
                                                                            dx.data(), rows, k);
  } else {
    activationBackwardKernel<<<blocksFor(n), kThreadsPerBlock, 0, stream_>>>(kind, alpha, y.data(),
                                                                            dy.data(), dx.data(), n);
  }
  DL4CPP_CUDA_CHECK_LAUNCH();
}

double CudaBackend::lossScore(LossKind loss, const Tensor& y, const Tensor& labels) {
  const int64_t n = y.numel(), k = y.dim(1);
  if (n == 0) return 0.0;
  double* terms = reinterpret_cast<double*>(scratch(terms_, 2 * n));
  lossTermsKernel<<<blocksFor(n), kThreadsPerBlock, 0, stream_>>>(loss, y.data(), labels.data(),
                                                                 terms, n);
  DL4CPP_CUDA_CHECK_LAUNCH();
  const double sum = sumOnDevice(terms, n);
  return loss == LossKind::MSE ? sum / static_cast<double>(k) : sum;
}

double CudaBackend::lossForwardBackward(LossKind loss, ActivationKind activation, float alpha,
                                        const Tensor& y, const Tensor& labels, Tensor& dz) {
  const int64_t n = y.dim(0), k = y.dim(1), total = y.numel();
  const bool crossEntropy = loss == LossKind::NEGATIVELOGLIKELIHOOD || loss == LossKind::MCXENT;
  if (total > 0) {
    if (crossEntropy && activation == ActivationKind::SOFTMAX) {
      softmaxCrossEntropyGradientKernel<<<blocksFor(n), kThreadsPerBlock, 0, stream_>>>(
          y.data(), labels.data(), dz.data(), n, k);
      DL4CPP_CUDA_CHECK_LAUNCH();
    } else if (loss == LossKind::XENT && activation == ActivationKind::SIGMOID) {
      differenceKernel<<<blocksFor(total), kThreadsPerBlock, 0, stream_>>>(y.data(), labels.data(),
                                                                          dz.data(), total);
      DL4CPP_CUDA_CHECK_LAUNCH();
    } else {
      lossGradientKernel<<<blocksFor(total), kThreadsPerBlock, 0, stream_>>>(
          loss, y.data(), labels.data(), dz.data(), total, k);
      DL4CPP_CUDA_CHECK_LAUNCH();
      activationBackward(activation, alpha, y, dz, dz);
    }
  }
  return lossScore(loss, y, labels);
}

void CudaBackend::updaterStep(const UpdaterParams& u, double l2, int64_t iteration, Tensor& param,
                              Tensor& grad, Tensor& state) {
  const int64_t n = param.numel();
  if (n == 0) return;
  UpdaterArgs a{};
  a.kind = u.kind;
  a.lr = static_cast<float>(u.learningRate);
  a.decay = static_cast<float>(l2);
  a.mu = static_cast<float>(u.momentum);
  a.b1 = static_cast<float>(u.beta1);
  a.b2 = static_cast<float>(u.beta2);
  // 1 - beta in double, as on the CPU: 1.0f - 0.999f is off by 1.3e-5 relative.
  a.c1 = static_cast<float>(1.0 - u.beta1);
  a.c2 = static_cast<float>(1.0 - u.beta2);
  if (u.kind == UpdaterKind::ADAM) {  // DL4J's Adam: bias correction folded into the step size
    const double t = static_cast<double>(iteration + 1);
    a.alphaT = static_cast<float>(u.learningRate * std::sqrt(1.0 - std::pow(u.beta2, t)) /
                                  (1.0 - std::pow(u.beta1, t)));
  }
  a.rho = static_cast<float>(u.rmsDecay);
  a.c = static_cast<float>(1.0 - u.rmsDecay);
  a.eps = static_cast<float>(u.epsilon);
  if (a.decay == 0.0f && u.kind == UpdaterKind::NOOP) return;
  updaterKernel<<<blocksFor(n), kThreadsPerBlock, 0, stream_>>>(a, param.data(), grad.data(),
                                                               state.data(), n);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaBackend::scale(Tensor& y, float a) {
  const int64_t n = y.numel();
  if (n == 0) return;
  scaleKernel<<<blocksFor(n), kThreadsPerBlock, 0, stream_>>>(y.data(), a, n);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

double CudaBackend::sumOfSquares(const Tensor& x) {
  const int64_t n = x.numel();
  if (n == 0) return 0.0;
  double* terms = reinterpret_cast<double*>(scratch(terms_, 2 * n));
  squaresKernel<<<blocksFor(n), kThreadsPerBlock, 0, stream_>>>(x.data(), terms, n);
  DL4CPP_CUDA_CHECK_LAUNCH();
  return sumOnDevice(terms, n);
}

void CudaBackend::sumsOfSquares(const Tensor* xs, int64_t count, double* out) {
  if (count <= 0) return;
  int64_t total = 0;
  for (int64_t i = 0; i < count; ++i) total += xs[i].numel();
  // Every tensor's squares side by side in one terms buffer, every sum into its own double.
  double* terms = reinterpret_cast<double*>(scratch(terms_, 2 * std::max<int64_t>(total, 1)));
  double* sums = reinterpret_cast<double*>(scratch(reduced_, 2 * count));
  int64_t offset = 0;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t n = xs[i].numel();
    if (n > 0) {
      squaresKernel<<<blocksFor(n), kThreadsPerBlock, 0, stream_>>>(xs[i].data(), terms + offset, n);
      DL4CPP_CUDA_CHECK_LAUNCH();
    }
    queueSum(terms + offset, n, sums + i);
    offset += n;
  }
  readBack(sums, count, out);  // the one wait for all of them
}

}  // namespace dl4cpp::cuda
