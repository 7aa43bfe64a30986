#pragma once
// The CUDA backend: the shared state of its op families (one file each: Cuda<Family>.cu). GEMM
// and convolution on cuBLAS (im2col / col2im kernels around batched GEMMs),
// pooling, activations, losses, updaters and reductions as simple kernels, sums with CUB; the
// recurrent ops as a loop over time of cuBLAS GEMMs and cell kernels. One
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

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }

 private:
  // The families (Cuda<Family>.cu) run their kernels on this state.
  friend class CudaConvolution;
  friend class CudaPooling;
  friend class CudaNormalization;
  friend class CudaElementwise;
  friend class CudaTransform;
  friend class CudaRecurrent;

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
  std::unique_ptr<ConvolutionImpl> convolution_;
  std::unique_ptr<PoolingImpl> pooling_;
  std::unique_ptr<NormalizationImpl> normalization_;
  std::unique_ptr<ElementwiseImpl> elementwise_;
  std::unique_ptr<TransformImpl> transform_;
  std::unique_ptr<RecurrentImpl> recurrent_;
};

// Each family's CUDA implementation, defined in its own file (CudaConvolution.cu, CudaPooling.cu,
// CudaNormalization.cu, CudaElementwise.cu, CudaTransform.cu, CudaRecurrent.cu) on the backend's
// shared state.
std::unique_ptr<ConvolutionImpl> makeCudaConvolution(CudaBackend& core);
std::unique_ptr<PoolingImpl> makeCudaPooling(CudaBackend& core);
std::unique_ptr<NormalizationImpl> makeCudaNormalization(CudaBackend& core);
std::unique_ptr<ElementwiseImpl> makeCudaElementwise(CudaBackend& core);
std::unique_ptr<TransformImpl> makeCudaTransform(CudaBackend& core);
std::unique_ptr<RecurrentImpl> makeCudaRecurrent(CudaBackend& core);

}  // namespace dl4cpp::cuda
