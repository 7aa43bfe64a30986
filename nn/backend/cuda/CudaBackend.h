#pragma once
// The CUDA backend: GEMM and convolution on cuBLAS (im2col / col2im kernels around batched GEMMs),
// pooling, activations, losses, updaters and reductions as simple kernels, sums with CUB. One
// instance per DeviceContext: it owns the context's compute stream, its cuBLAS handle, a copy
// stream for input staging, and grow-only scratch buffers, so a step on shapes seen before neither
// allocates nor synchronises with the host, except for the scalar results the Backend interface
// returns (loss sums, sums of squares), which are read back through one pinned double.
//
// Internal header: it names CUDA types, so only the backend's .cu files include it.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "nn/backend/Backend.h"
#include "nn/backend/cuda/BatchStager.h"

namespace dl4cpp::cuda {

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  void bindToCurrentThread(int numThreads) override;

  void convolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                          const WindowGeometry& g) override;
  void convolutionBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx,
                               const WindowGeometry& g) override;
  void convolutionBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                                  const WindowGeometry& g) override;
  void poolingForward(PoolingKind kind, const Tensor& x, Tensor& y, const WindowGeometry& g,
                      bool training, Tensor& workspace) override;
  void poolingBackward(PoolingKind kind, const Tensor& dy, Tensor& dx, const WindowGeometry& g,
                       const Tensor& workspace) override;
  void batchNormForwardTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                                Tensor& y, Tensor& batchMean, Tensor& batchVariance) override;
  void batchNormForwardInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                 const Tensor& mean, const Tensor& variance, float eps,
                                 Tensor& y) override;
  void batchNormBackward(const Tensor& x, const Tensor& dy, const Tensor& gamma,
                         const Tensor& batchMean, const Tensor& batchVariance, float eps,
                         Tensor& dx, Tensor& dgamma, Tensor& dbeta) override;
  void innerProductForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y) override;
  void innerProductBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx) override;
  void innerProductBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                   Tensor& db) override;
  void activationForward(ActivationKind kind, float alpha, const Tensor& x, Tensor& y) override;
  void activationBackward(ActivationKind kind, float alpha, const Tensor& x, const Tensor& y,
                          const Tensor& dy, Tensor& dx) override;
  double lossForwardBackward(LossKind loss, ActivationKind activation, float alpha, const Tensor& z,
                             const Tensor& y, const Tensor& labels, Tensor& dz) override;
  double lossScore(LossKind loss, const Tensor& y, const Tensor& labels) override;
  void movingAverage(Tensor& average, const Tensor& value, float decay) override;
  void dropoutMask(uint64_t seed, float retainProbability, Tensor& mask) override;
  void multiply(const Tensor& x, const Tensor& y, Tensor& z) override;
  void updaterStep(const UpdaterParams& u, const RegularizationParams& r, int64_t iteration,
                   Tensor& param, Tensor& grad, Tensor& state) override;
  void scale(Tensor& y, float a) override;
  double sumOfSquares(const Tensor& x) override;
  void sumsOfSquares(const Tensor* xs, int64_t count, double* out) override;
  void stageBatch(const Tensor& features, const Tensor& labels, Tensor& deviceFeatures,
                  Tensor& deviceLabels) override;
  void globalPoolingForward(PoolingKind kind, int pnorm, const Tensor& x, Tensor& y) override;
  void globalPoolingBackward(PoolingKind kind, int pnorm, const Tensor& x, const Tensor& y,
                             const Tensor& dy, Tensor& dx) override;
  void lrnForward(const LrnParams& p, const Tensor& x, Tensor& y, bool training,
                  Tensor& workspace) override;
  void lrnBackward(const LrnParams& p, const Tensor& x, const Tensor& dy, Tensor& dx,
                   const Tensor& workspace) override;
  void zeroPaddingForward(const Tensor& x, Tensor& y, const Padding2d& p) override;
  void zeroPaddingBackward(const Tensor& dy, Tensor& dx, const Padding2d& p) override;
  void copy(const Tensor& src, Tensor& dst) override;
  double sumOfAbsolutes(const Tensor& x) override;
  void sumsOfAbsolutes(const Tensor* xs, int64_t count, double* out) override;
  void clipByValue(Tensor& y, float threshold) override;

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }

 private:
  // Row-major C (m x n) = alpha * op(A) (m x k) * op(B) (k x n) + beta * C, where op transposes
  // when asked; A, B, C dense row-major. The one place that calls cuBLAS (the translation to its
  // column-major convention is columnMajorGemm in GemmTranslation.h).
  // batch > 1 runs `batch` such products, the i-th on A + i*strideA, B + i*strideB, C + i*strideC
  // (a stride of 0 shares that operand).
  void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
            const float* b, float beta, float* c, int64_t batch = 1, int64_t strideA = 0,
            int64_t strideB = 0, int64_t strideC = 0);
  // db[o] = sum over n, p of dy[n][o][p] for dy (N, O, P).
  void reduceChannels(const Tensor& dy, int64_t channels, int64_t perChannel, Tensor& db);
  // y[n][o][p] += b[o] for y (N, O, P).
  void addBias(Tensor& y, const Tensor& b, int64_t channels, int64_t perChannel);
  // Sums `n` doubles of `terms` (device memory) with CUB and reads the result back to the host:
  // with readBack(), the backend's only host synchronisations.
  double sumOnDevice(const double* terms, int64_t n);
  // Queues out[0] = sum of terms[0, n) (device memory) on the stream, without waiting.
  void queueSum(const double* terms, int64_t n, double* out);
  // Copies `count` doubles from `device` to `host` and waits for the stream.
  void readBack(const double* device, int64_t count, double* host);
  // out[i] = the sum over xs[i] of x^2, or of |x| when `absolute`, with one wait for all of them.
  void sumsOfTerms(bool absolute, const Tensor* xs, int64_t count, double* out);
  // A device scratch buffer of at least `floats` floats, grown (never shrunk) on demand.
  float* scratch(Tensor& buffer, int64_t floats);

  int device_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  Tensor columns_;         // im2col of a minibatch / its gradient
  Tensor weightPartials_;  // per-image weight gradients before the sum over the minibatch
  Tensor ones_;            // a vector of ones (sums over the minibatch as a GEMM)
  int64_t onesFilled_ = 0;
  Tensor terms_;                   // per-element doubles of a reduction
  Tensor reduceTemp_;              // CUB's temporary storage
  Tensor reduced_;                 // CUB's results (doubles)
  double* hostResults_ = nullptr;  // pinned: where reduced_ is read back
  int64_t hostResultsCapacity_ = 0;
  std::unique_ptr<BatchStager> stager_;
};

}  // namespace dl4cpp::cuda
