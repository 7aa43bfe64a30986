// The CUDA backend's element-wise and flat-buffer family (ops/ElementwiseOps.h): activations,
// softmax, losses, updater steps, running averages, dropout masks, products, scaling, clipping and
// sums of squares and of absolute values. The formulas are in ElementwiseMath.h (tested on the host
// against the CPU backend); sums are formed in double by CUB.
//
// The CUDA backend's ops that only move data: copies on the compute stream and zero padding (one
// thread per output element) and its reverse, the crop of the gradient (one per input element).
// The index arithmetic is in PaddingMath.h (tested on the host).
#include <algorithm>
#include <cmath>
#include <memory>

#include "nn/backend/CounterRandom.h"
#include "nn/backend/SoftmaxLines.h"
#include "nn/backend/cuda/CudaBackend.h"
#include "nn/backend/cuda/CudaCheck.h"
#include "nn/backend/cuda/ElementwiseMath.h"
#include "nn/backend/cuda/Launch.h"
#include "nn/backend/cuda/PaddingMath.h"

namespace dl4cpp::cuda {

class CudaElementwise final : public ElementwiseImpl {
 public:
  explicit CudaElementwise(CudaBackend& core) : core_(core) {}
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
  void sumsOfSquares(const Tensor* xs, int64_t count, double* out) override;
  double sumOfAbsolutes(const Tensor& x) override;
  void sumsOfAbsolutes(const Tensor* xs, int64_t count, double* out) override;
  void zeroPaddingForward(const Tensor& x, Tensor& y, const Padding2d& p) override;
  void zeroPaddingBackward(const Tensor& dy, Tensor& dx, const Padding2d& p) override;
  void copy(const Tensor& src, Tensor& dst) override;
  void stageBatch(const Tensor& features, const Tensor& labels, Tensor& deviceFeatures,
                  Tensor& deviceLabels) override;

 private:
  // out[i] = the sum over xs[i] of x^2, or of |x| when `absolute`, with one wait for all of them.
  void sumsOfTerms(bool absolute, const Tensor* xs, int64_t count, double* out);

  CudaBackend& core_;
};

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

__global__ void logSoftmaxForwardKernel(const float* x, float* y, SoftmaxLines lines) {
  DL4CPP_GRID_STRIDE_LOOP(l, lines.count) {
    const int64_t at = lines.start(l);
    logSoftmaxLine(x + at, y + at, lines.channels, lines.stride);
  }
}

__global__ void logSoftmaxBackwardKernel(const float* y, const float* dy, float* dx,
                                         SoftmaxLines lines) {
  DL4CPP_GRID_STRIDE_LOOP(l, lines.count) {
    const int64_t at = lines.start(l);
    logSoftmaxBackwardLine(y + at, dy + at, dx + at, lines.channels, lines.stride);
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
namespace {
__global__ void movingAverageKernel(float* average, const float* value, float keep, float take,
                                    int64_t n) {
  DL4CPP_GRID_STRIDE_LOOP(i, n) average[i] = keep * average[i] + take * value[i];
}

__global__ void dropoutMaskKernel(uint64_t seed, uint32_t threshold, float inverse, float* mask,
                                  int64_t n) {
  DL4CPP_GRID_STRIDE_LOOP(i, n)
  mask[i] = dropoutMaskValue(seed, static_cast<uint64_t>(i), threshold, inverse);
}

__global__ void multiplyKernel(const float* x, const float* y, float* z, int64_t n) {
  DL4CPP_GRID_STRIDE_LOOP(i, n) z[i] = x[i] * y[i];
}

}  // namespace

namespace {

__global__ void padKernel(const float* x, float* y, PaddingShape s, int64_t total) {
  DL4CPP_GRID_STRIDE_LOOP(i, total) y[i] = paddedElement(x, s, i);
}

__global__ void cropKernel(const float* dy, float* dx, PaddingShape s, int64_t total) {
  DL4CPP_GRID_STRIDE_LOOP(i, total) dx[i] = croppedElement(dy, s, i);
}

}  // namespace

void CudaElementwise::activationForward(ActivationKind kind, float alpha, const Tensor& x,
                                        Tensor& y) {
  const int64_t n = y.numel();
  if (n == 0) return;
  if (kind == ActivationKind::IDENTITY) {
    if (y.data() != x.data())
      DL4CPP_CUDA_CHECK(cudaMemcpyAsync(y.data(), x.data(), static_cast<size_t>(n) * sizeof(float),
                                        cudaMemcpyDeviceToDevice, core_.stream_));
    return;
  }
  if (kind == ActivationKind::SOFTMAX) {
    const SoftmaxLines lines(y);
    softmaxForwardKernel<<<blocksFor(lines.count), kThreadsPerBlock, 0, core_.stream_>>>(
        x.data(), y.data(), lines);
  } else if (kind == ActivationKind::LOGSOFTMAX) {
    const SoftmaxLines lines(y);
    logSoftmaxForwardKernel<<<blocksFor(lines.count), kThreadsPerBlock, 0, core_.stream_>>>(
        x.data(), y.data(), lines);
  } else {
    activationForwardKernel<<<blocksFor(n), kThreadsPerBlock, 0, core_.stream_>>>(
        kind, alpha, x.data(), y.data(), n);
  }
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaElementwise::activationBackward(ActivationKind kind, float alpha, const Tensor& x,
                                         const Tensor& y, const Tensor& dy, Tensor& dx) {
  const int64_t n = y.numel();
  if (n == 0) return;
  if (kind == ActivationKind::IDENTITY) {
    if (dx.data() != dy.data())
      DL4CPP_CUDA_CHECK(cudaMemcpyAsync(dx.data(), dy.data(),
                                        static_cast<size_t>(n) * sizeof(float),
                                        cudaMemcpyDeviceToDevice, core_.stream_));
    return;
  }
  if (kind == ActivationKind::SOFTMAX) {
    const SoftmaxLines lines(y);
    softmaxBackwardKernel<<<blocksFor(lines.count), kThreadsPerBlock, 0, core_.stream_>>>(
        y.data(), dy.data(), dx.data(), lines);
  } else if (kind == ActivationKind::LOGSOFTMAX) {
    const SoftmaxLines lines(y);
    logSoftmaxBackwardKernel<<<blocksFor(lines.count), kThreadsPerBlock, 0, core_.stream_>>>(
        y.data(), dy.data(), dx.data(), lines);
  } else {
    const bool fromInput = activationBackwardNeedsInput(kind);
    if (fromInput && x.numel() != n)
      throw BackendError(
          "activationBackward: this activation's backward pass reads its input x "
          "(activationBackwardNeedsInput), which was not given");
    activationBackwardKernel<<<blocksFor(n), kThreadsPerBlock, 0, core_.stream_>>>(
        kind, alpha, fromInput ? x.data() : nullptr, y.data(), dy.data(), dx.data(), n);
  }
  DL4CPP_CUDA_CHECK_LAUNCH();
}

double CudaElementwise::lossScore(LossKind loss, const Tensor& y, const Tensor& labels) {
  const int64_t n = y.numel(), k = y.dim(1);
  if (n == 0) return 0.0;
  double* terms = reinterpret_cast<double*>(core_.scratch(core_.terms_, 2 * n));
  lossTermsKernel<<<blocksFor(n), kThreadsPerBlock, 0, core_.stream_>>>(loss, y.data(),
                                                                        labels.data(), terms, n);
  DL4CPP_CUDA_CHECK_LAUNCH();
  const double sum = core_.sumOnDevice(terms, n);
  return lossAveragesOutputs(loss) ? sum / static_cast<double>(k) : sum;
}

double CudaElementwise::lossForwardBackward(LossKind loss, ActivationKind activation, float alpha,
                                            const Tensor& z, const Tensor& y, const Tensor& labels,
                                            Tensor& dz) {
  const int64_t n = y.dim(0), k = y.dim(1), total = y.numel();
  const bool crossEntropy = loss == LossKind::NEGATIVELOGLIKELIHOOD || loss == LossKind::MCXENT;
  if (total > 0) {
    if (crossEntropy && activation == ActivationKind::SOFTMAX) {
      softmaxCrossEntropyGradientKernel<<<blocksFor(n), kThreadsPerBlock, 0, core_.stream_>>>(
          y.data(), labels.data(), dz.data(), n, k);
      DL4CPP_CUDA_CHECK_LAUNCH();
    } else if (loss == LossKind::XENT && activation == ActivationKind::SIGMOID) {
      differenceKernel<<<blocksFor(total), kThreadsPerBlock, 0, core_.stream_>>>(
          y.data(), labels.data(), dz.data(), total);
      DL4CPP_CUDA_CHECK_LAUNCH();
    } else {
      lossGradientKernel<<<blocksFor(total), kThreadsPerBlock, 0, core_.stream_>>>(
          loss, y.data(), labels.data(), dz.data(), total, k);
      DL4CPP_CUDA_CHECK_LAUNCH();
      activationBackward(activation, alpha, z, y, dz, dz);
    }
  }
  return lossScore(loss, y, labels);
}

void CudaElementwise::updaterStep(const UpdaterParams& u, const RegularizationParams& r,
                                  int64_t iteration, Tensor& param, Tensor& grad, Tensor& state) {
  const int64_t n = param.numel();
  if (n == 0) return;
  const UpdaterArgs a = updaterArgs(u, r, iteration);
  if (a.l1 == 0.0f && a.l2 == 0.0f && u.kind == UpdaterKind::NOOP) return;
  updaterKernel<<<blocksFor(n), kThreadsPerBlock, 0, core_.stream_>>>(a, param.data(), grad.data(),
                                                                      state.data(), n);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaElementwise::scale(Tensor& y, float a) {
  const int64_t n = y.numel();
  if (n == 0) return;
  scaleKernel<<<blocksFor(n), kThreadsPerBlock, 0, core_.stream_>>>(y.data(), a, n);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

double CudaElementwise::sumOfSquares(const Tensor& x) {
  const int64_t n = x.numel();
  if (n == 0) return 0.0;
  double* terms = reinterpret_cast<double*>(core_.scratch(core_.terms_, 2 * n));
  squaresKernel<<<blocksFor(n), kThreadsPerBlock, 0, core_.stream_>>>(x.data(), terms, n);
  DL4CPP_CUDA_CHECK_LAUNCH();
  return core_.sumOnDevice(terms, n);
}

void CudaElementwise::sumsOfSquares(const Tensor* xs, int64_t count, double* out) {
  sumsOfTerms(false, xs, count, out);
}

double CudaElementwise::sumOfAbsolutes(const Tensor& x) {
  double sum = 0.0;
  sumsOfTerms(true, &x, 1, &sum);
  return sum;
}

void CudaElementwise::sumsOfAbsolutes(const Tensor* xs, int64_t count, double* out) {
  sumsOfTerms(true, xs, count, out);
}

void CudaElementwise::sumsOfTerms(bool absolute, const Tensor* xs, int64_t count, double* out) {
  if (count <= 0) return;
  int64_t total = 0;
  for (int64_t i = 0; i < count; ++i) total += xs[i].numel();
  // Every tensor's terms side by side in one terms buffer, every sum into its own double.
  double* terms =
      reinterpret_cast<double*>(core_.scratch(core_.terms_, 2 * std::max<int64_t>(total, 1)));
  double* sums = reinterpret_cast<double*>(core_.scratch(core_.reduced_, 2 * count));
  int64_t offset = 0;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t n = xs[i].numel();
    if (n > 0) {
      if (absolute)
        absolutesKernel<<<blocksFor(n), kThreadsPerBlock, 0, core_.stream_>>>(xs[i].data(),
                                                                              terms + offset, n);
      else
        squaresKernel<<<blocksFor(n), kThreadsPerBlock, 0, core_.stream_>>>(xs[i].data(),
                                                                            terms + offset, n);
      DL4CPP_CUDA_CHECK_LAUNCH();
    }
    core_.queueSum(terms + offset, n, sums + i);
    offset += n;
  }
  core_.readBack(sums, count, out);  // the one wait for all of them
}

void CudaElementwise::clipByValue(Tensor& y, float threshold) {
  const int64_t n = y.numel();
  if (n == 0) return;
  clipKernel<<<blocksFor(n), kThreadsPerBlock, 0, core_.stream_>>>(y.data(), threshold, n);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaElementwise::zeroPaddingForward(const Tensor& x, Tensor& y, const Padding2d& p) {
  const int64_t total = y.numel();
  if (total == 0) return;
  padKernel<<<blocksFor(total), kThreadsPerBlock, 0, core_.stream_>>>(
      x.data(), y.data(), PaddingShape{x.dim(2), x.dim(3), p}, total);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaElementwise::zeroPaddingBackward(const Tensor& dy, Tensor& dx, const Padding2d& p) {
  const int64_t total = dx.numel();
  if (total == 0) return;
  cropKernel<<<blocksFor(total), kThreadsPerBlock, 0, core_.stream_>>>(
      dy.data(), dx.data(), PaddingShape{dx.dim(2), dx.dim(3), p}, total);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaElementwise::copy(const Tensor& src, Tensor& dst) {
  if (src.numel() == 0) return;
  DL4CPP_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(),
                                    static_cast<size_t>(src.numel()) * sizeof(float),
                                    cudaMemcpyDeviceToDevice, core_.stream_));
}

void CudaElementwise::movingAverage(Tensor& average, const Tensor& value, float decay) {
  const int64_t n = average.numel();
  if (n == 0) return;
  movingAverageKernel<<<blocksFor(n), kThreadsPerBlock, 0, core_.stream_>>>(
      average.data(), value.data(), decay, static_cast<float>(1.0 - double(decay)), n);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaElementwise::dropoutMask(uint64_t seed, float retainProbability, Tensor& mask) {
  const int64_t n = mask.numel();
  if (n == 0) return;
  dropoutMaskKernel<<<blocksFor(n), kThreadsPerBlock, 0, core_.stream_>>>(
      seed, keepThreshold24(retainProbability), 1.0f / retainProbability, mask.data(), n);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaElementwise::multiply(const Tensor& x, const Tensor& y, Tensor& z) {
  const int64_t n = z.numel();
  if (n == 0) return;
  multiplyKernel<<<blocksFor(n), kThreadsPerBlock, 0, core_.stream_>>>(x.data(), y.data(), z.data(),
                                                                       n);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

// --- Staging
// ----------------------------------------------------------------------------------------

void CudaElementwise::stageBatch(const Tensor& features, const Tensor& labels,
                                 Tensor& deviceFeatures, Tensor& deviceLabels) {
  const Device here = Device::cuda(core_.device_);
  auto fromHost = [](const Tensor& t) { return !t.empty() && t.device().isCpu(); };
  auto elsewhere = [&](const Tensor& t) {
    return t.empty() || t.device() == here ? t : t.to(here);
  };
  if (fromHost(features) || fromHost(labels))
    core_.stager_->stage(fromHost(features) ? features : Tensor(),
                         fromHost(labels) ? labels : Tensor(), deviceFeatures, deviceLabels);
  if (!fromHost(features)) deviceFeatures = elsewhere(features);
  if (!fromHost(labels)) deviceLabels = elsewhere(labels);
}

std::unique_ptr<ElementwiseImpl> makeCudaElementwise(CudaBackend& core) {
  return std::make_unique<CudaElementwise>(core);
}

}  // namespace dl4cpp::cuda
