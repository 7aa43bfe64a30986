// The CUDA backend's element-wise work: activations, softmax, losses, updater steps, scaling,
// clipping and sums of squares and of absolute values. The formulas are in ElementwiseMath.h
// (tested on the host against the CPU backend); sums are formed in double by CUB.
#include <algorithm>
#include <cmath>

#include "nn/backend/SoftmaxLines.h"
#include "nn/backend/cuda/CudaBackend.h"
#include "nn/backend/cuda/CudaCheck.h"
#include "nn/backend/cuda/ElementwiseMath.h"
#include "nn/backend/cuda/Launch.h"

namespace dl4cpp::cuda {

namespace {

__global__ void activationForwardKernel(ActivationKind kind, float alpha, const float* x, float* y,
                                        int64_t n) {
  DL4CPP_GRID_STRIDE_LOOP(i, n) y[i] = activate(kind, alpha, x[i]);
}

// x is null for the activations whose backward reads only y.
__global__ void activationBackwardKernel(ActivationKind kind, float alpha, const float* x,
                                         const float* y, const float* dy, float* dx, int64_t n) {
  DL4CPP_GRID_STRIDE_LOOP(i, n)
  dx[i] = activateBackward(kind, alpha, x != nullptr ? x[i] : 0.0f, y[i], dy[i]);
}

// The line-wise ops run one thread per softmax line: output layers have few classes.
__global__ void softmaxForwardKernel(const float* x, float* y, SoftmaxLines lines) {
  DL4CPP_GRID_STRIDE_LOOP(l, lines.count) {
    const int64_t at = lines.start(l);
    softmaxLine(x + at, y + at, lines.channels, lines.stride);
  }
}

__global__ void softmaxBackwardKernel(const float* y, const float* dy, float* dx,
                                      SoftmaxLines lines) {
  DL4CPP_GRID_STRIDE_LOOP(l, lines.count) {
    const int64_t at = lines.start(l);
    softmaxBackwardLine(y + at, dy + at, dx + at, lines.channels, lines.stride);
  }
}

__global__ void softmaxCrossEntropyGradientKernel(const float* p, const float* l, float* g,
                                                  int64_t rows, int64_t k) {
  DL4CPP_GRID_STRIDE_LOOP(r, rows)
  softmaxCrossEntropyGradientRow(p + r * k, l + r * k, g + r * k, k);
}

__global__ void differenceKernel(const float* p, const float* l, float* g, int64_t n) {
  DL4CPP_GRID_STRIDE_LOOP(i, n) g[i] = p[i] - l[i];
}

__global__ void lossGradientKernel(LossKind loss, const float* y, const float* l, float* g,
                                   int64_t n, int64_t k) {
  DL4CPP_GRID_STRIDE_LOOP(i, n) g[i] = lossGradient(loss, y[i], l[i], k);
}

__global__ void lossTermsKernel(LossKind loss, const float* p, const float* l, double* terms,
                                int64_t n) {
  DL4CPP_GRID_STRIDE_LOOP(i, n) terms[i] = lossTerm(loss, p[i], l[i]);
}

__global__ void squaresKernel(const float* x, double* terms, int64_t n) {
  DL4CPP_GRID_STRIDE_LOOP(i, n) terms[i] = double(x[i]) * double(x[i]);
}

__global__ void scaleKernel(float* y, float a, int64_t n) {
  DL4CPP_GRID_STRIDE_LOOP(i, n) y[i] *= a;
}

__global__ void absolutesKernel(const float* x, double* terms, int64_t n) {
  DL4CPP_GRID_STRIDE_LOOP(i, n) terms[i] = fabs(double(x[i]));
}

__global__ void clipKernel(float* y, float threshold, int64_t n) {
  DL4CPP_GRID_STRIDE_LOOP(i, n) y[i] = clipElement(y[i], threshold);
}

__global__ void updaterKernel(UpdaterArgs a, float* p, float* g, float* s, int64_t n) {
  DL4CPP_GRID_STRIDE_LOOP(i, n) updaterElement(a, p, g, s, i, n);
}

}  // namespace

void CudaBackend::activationForward(ActivationKind kind, float alpha, const Tensor& x, Tensor& y) {
  const int64_t n = y.numel();
  if (n == 0) return;
  if (kind == ActivationKind::IDENTITY) {
    if (y.data() != x.data())
      DL4CPP_CUDA_CHECK(cudaMemcpyAsync(y.data(), x.data(), static_cast<size_t>(n) * sizeof(float),
                                        cudaMemcpyDeviceToDevice, stream_));
    return;
  }
  if (kind == ActivationKind::SOFTMAX) {
    const SoftmaxLines lines(y);
    softmaxForwardKernel<<<blocksFor(lines.count), kThreadsPerBlock, 0, stream_>>>(x.data(),
                                                                                   y.data(), lines);
  } else {
    activationForwardKernel<<<blocksFor(n), kThreadsPerBlock, 0, stream_>>>(kind, alpha, x.data(),
                                                                            y.data(), n);
  }
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaBackend::activationBackward(ActivationKind kind, float alpha, const Tensor& x,
                                     const Tensor& y, const Tensor& dy, Tensor& dx) {
  const int64_t n = y.numel();
  if (n == 0) return;
  if (kind == ActivationKind::IDENTITY) {
    if (dx.data() != dy.data())
      DL4CPP_CUDA_CHECK(cudaMemcpyAsync(dx.data(), dy.data(),
                                        static_cast<size_t>(n) * sizeof(float),
                                        cudaMemcpyDeviceToDevice, stream_));
    return;
  }
  if (kind == ActivationKind::SOFTMAX) {
    const SoftmaxLines lines(y);
    softmaxBackwardKernel<<<blocksFor(lines.count), kThreadsPerBlock, 0, stream_>>>(
        y.data(), dy.data(), dx.data(), lines);
  } else {
    const bool fromInput = activationBackwardNeedsInput(kind);
    if (fromInput && x.numel() != n)
      throw BackendError(
          "activationBackward: this activation's backward pass reads its input x "
          "(activationBackwardNeedsInput), which was not given");
    activationBackwardKernel<<<blocksFor(n), kThreadsPerBlock, 0, stream_>>>(
        kind, alpha, fromInput ? x.data() : nullptr, y.data(), dy.data(), dx.data(), n);
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
  return lossAveragesOutputs(loss) ? sum / static_cast<double>(k) : sum;
}

double CudaBackend::lossForwardBackward(LossKind loss, ActivationKind activation, float alpha,
                                        const Tensor& z, const Tensor& y, const Tensor& labels,
                                        Tensor& dz) {
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
      activationBackward(activation, alpha, z, y, dz, dz);
    }
  }
  return lossScore(loss, y, labels);
}

void CudaBackend::updaterStep(const UpdaterParams& u, const RegularizationParams& r,
                              int64_t iteration, Tensor& param, Tensor& grad, Tensor& state) {
  const int64_t n = param.numel();
  if (n == 0) return;
  const UpdaterArgs a = updaterArgs(u, r, iteration);
  if (a.l1 == 0.0f && a.l2 == 0.0f && u.kind == UpdaterKind::NOOP) return;
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
  sumsOfTerms(false, xs, count, out);
}

double CudaBackend::sumOfAbsolutes(const Tensor& x) {
  double sum = 0.0;
  sumsOfTerms(true, &x, 1, &sum);
  return sum;
}

void CudaBackend::sumsOfAbsolutes(const Tensor* xs, int64_t count, double* out) {
  sumsOfTerms(true, xs, count, out);
}

void CudaBackend::sumsOfTerms(bool absolute, const Tensor* xs, int64_t count, double* out) {
  if (count <= 0) return;
  int64_t total = 0;
  for (int64_t i = 0; i < count; ++i) total += xs[i].numel();
  // Every tensor's terms side by side in one terms buffer, every sum into its own double.
  double* terms = reinterpret_cast<double*>(scratch(terms_, 2 * std::max<int64_t>(total, 1)));
  double* sums = reinterpret_cast<double*>(scratch(reduced_, 2 * count));
  int64_t offset = 0;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t n = xs[i].numel();
    if (n > 0) {
      if (absolute)
        absolutesKernel<<<blocksFor(n), kThreadsPerBlock, 0, stream_>>>(xs[i].data(),
                                                                        terms + offset, n);
      else
        squaresKernel<<<blocksFor(n), kThreadsPerBlock, 0, stream_>>>(xs[i].data(), terms + offset,
                                                                      n);
      DL4CPP_CUDA_CHECK_LAUNCH();
    }
    queueSum(terms + offset, n, sums + i);
    offset += n;
  }
  readBack(sums, count, out);  // the one wait for all of them
}

void CudaBackend::clipByValue(Tensor& y, float threshold) {
  const int64_t n = y.numel();
  if (n == 0) return;
  clipKernel<<<blocksFor(n), kThreadsPerBlock, 0, stream_>>>(y.data(), threshold, n);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

}  // namespace dl4cpp::cuda
