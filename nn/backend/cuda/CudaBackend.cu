// CudaBackend's construction, its GEMM helper, inner product, bias handling, reductions and batch
// staging. Convolution, pooling, normalisation, the element-wise and the recurrent ops live in
// CudaConvolution.cu, CudaPooling.cu, CudaNormalization.cu, CudaElementwise.cu and
// CudaRecurrent.cu.
#include <algorithm>
#include <climits>
#include <cub/device/device_reduce.cuh>
#include <string>

#include "nn/backend/cuda/CudaBackend.h"
#include "nn/backend/cuda/CudaBackendFactory.h"
#include "nn/backend/cuda/CudaCheck.h"
#include "nn/backend/cuda/DeviceGuard.h"
#include "nn/backend/cuda/GemmTranslation.h"
#include "nn/backend/cuda/Launch.h"

namespace dl4cpp::cuda {

namespace {

const CublasLibrary& cublas() { return CublasLibrary::get(); }

__global__ void addBiasKernel(float* y, const float* b, int64_t total, int64_t channels,
                              int64_t perChannel) {
  DL4CPP_GRID_STRIDE_LOOP(i, total) y[i] += b[(i / perChannel) % channels];
}

// One block per channel o: a deterministic tree sum of dy[n][o][p] over n and p.
__global__ void reduceChannelsKernel(const float* dy, float* db, int64_t batch, int64_t channels,
                                     int64_t perChannel) {
  __shared__ float partial[kThreadsPerBlock];
  const int64_t o = blockIdx.x;
  const int64_t count = batch * perChannel;
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < count; j += blockDim.x) {
    const int64_t n = j / perChannel, p = j % perChannel;
    sum += dy[(n * channels + o) * perChannel + p];
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = kThreadsPerBlock / 2; stride > 0; stride >>= 1) {
    if (static_cast<int>(threadIdx.x) < stride)
      partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) db[o] = partial[0];
}

int toInt(int64_t v, const char* what) {
  if (v < 0 || v > INT_MAX)
    throw BackendError(std::string("CudaBackend: ") + what + " = " + std::to_string(v) +
                       " exceeds cuBLAS's 32-bit dimensions");
  return static_cast<int>(v);
}

}  // namespace

CudaBackend::CudaBackend(int device) : device_(device) {
  const int count = deviceCount();
  if (device < 0 || device >= count)
    throw BackendError("cuda:" + std::to_string(device) + " requested, but this machine has " +
                       std::to_string(count) + " CUDA device(s)");
  DeviceGuard guard(device_);
  // Blocking (default-flag) stream: Tensor's copies on the legacy stream order against it.
  DL4CPP_CUDA_CHECK(cudaStreamCreate(&stream_));
  DL4CPP_CUBLAS_CHECK(cublas().create(&cublas_));
  DL4CPP_CUBLAS_CHECK(cublas().setStream(cublas_, stream_));
  DL4CPP_CUBLAS_CHECK(cublas().setPointerMode(cublas_, CUBLAS_POINTER_MODE_HOST));
  hostResultsCapacity_ = 64;  // one per parameter segment of any ordinary network
  DL4CPP_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&hostResults_),
                                   static_cast<size_t>(hostResultsCapacity_) * sizeof(double)));
  reduced_ = Tensor(Shape{2 * hostResultsCapacity_}, Device::cuda(device_));
  stager_ = std::make_unique<BatchStager>(device_, stream_);
  convolution_ = makeCudaConvolution(*this);
  pooling_ = makeCudaPooling(*this);
  normalization_ = makeCudaNormalization(*this);
  elementwise_ = makeCudaElementwise(*this);
  transform_ = makeCudaTransform(*this);
  recurrent_ = makeCudaRecurrent(*this);
  install(*convolution_, *pooling_, *normalization_, *elementwise_, *transform_, recurrent_.get());
}

CudaBackend::~CudaBackend() {
  // No throwing from a destructor; failures here mean the device is already lost.
  DeviceGuard guard(device_);
  stager_.reset();
  cudaStreamSynchronize(stream_);
  if (cublas_) cublas().destroy(cublas_);
  if (stream_) cudaStreamDestroy(stream_);
  if (hostResults_) cudaFreeHost(hostResults_);
}

void CudaBackend::bindToCurrentThread(int) { DL4CPP_CUDA_CHECK(cudaSetDevice(device_)); }

float* CudaBackend::scratch(Tensor& buffer, int64_t floats) {
  if (buffer.numel() < floats) buffer = Tensor(Shape{floats}, Device::cuda(device_));
  return buffer.data();
}

void CudaBackend::gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
                       const float* a, const float* b, float beta, float* c, int64_t batch,
                       int64_t strideA, int64_t strideB, int64_t strideC) {
  if (m == 0 || n == 0 || batch == 0) return;
  const ColumnMajorGemm g = columnMajorGemm(transA, transB, m, n, k);
  const cublasOperation_t opFirst = g.transFirst ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opSecond = g.transSecond ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int gm = toInt(g.m, "n"), gn = toInt(g.n, "m"), gk = toInt(g.k, "k");
  const int ldFirst = toInt(g.ldFirst, "ldb"), ldSecond = toInt(g.ldSecond, "lda");
  const int ldc = toInt(g.ldc, "ldc");
  if (batch == 1) {
    DL4CPP_CUBLAS_CHECK(cublas().sgemm(cublas_, opFirst, opSecond, gm, gn, gk, &alpha, b, ldFirst,
                                       a, ldSecond, &beta, c, ldc));
  } else {
    DL4CPP_CUBLAS_CHECK(cublas().sgemmStridedBatched(
        cublas_, opFirst, opSecond, gm, gn, gk, &alpha, b, ldFirst, strideB, a, ldSecond, strideA,
        &beta, c, ldc, strideC, toInt(batch, "batch")));
  }
}

void CudaBackend::addBias(Tensor& y, const Tensor& b, int64_t channels, int64_t perChannel) {
  const int64_t total = y.numel();
  if (total == 0) return;
  addBiasKernel<<<blocksFor(total), kThreadsPerBlock, 0, stream_>>>(y.data(), b.data(), total,
                                                                    channels, perChannel);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaBackend::reduceChannels(const Tensor& dy, int64_t channels, int64_t perChannel,
                                 Tensor& db) {
  if (channels == 0) return;
  const int64_t batch = dy.dim(0);
  reduceChannelsKernel<<<static_cast<unsigned>(toInt(channels, "channels")), kThreadsPerBlock, 0,
                         stream_>>>(dy.data(), db.data(), batch, channels, perChannel);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaBackend::queueSum(const double* terms, int64_t n, double* out) {
  if (n == 0) {
    DL4CPP_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(double), stream_));  // all-zero bits: 0.0
    return;
  }
  size_t tempBytes = 0;
  DL4CPP_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, tempBytes, terms, out, n, stream_));
  const int64_t tempFloats = static_cast<int64_t>((tempBytes + sizeof(float) - 1) / sizeof(float));
  void* temp = scratch(reduceTemp_, std::max<int64_t>(tempFloats, 1));
  DL4CPP_CUDA_CHECK(cub::DeviceReduce::Sum(temp, tempBytes, terms, out, n, stream_));
}

void CudaBackend::readBack(const double* device, int64_t count, double* host) {
  if (count > hostResultsCapacity_) {  // more results than ever before: grow the pinned buffer
    DL4CPP_CUDA_CHECK(cudaStreamSynchronize(stream_));
    DL4CPP_CUDA_CHECK(cudaFreeHost(hostResults_));
    hostResults_ = nullptr;
    hostResultsCapacity_ = 0;
    DL4CPP_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&hostResults_),
                                     static_cast<size_t>(count) * sizeof(double)));
    hostResultsCapacity_ = count;
  }
  DL4CPP_CUDA_CHECK(cudaMemcpyAsync(hostResults_, device,
                                    static_cast<size_t>(count) * sizeof(double),
                                    cudaMemcpyDeviceToHost, stream_));
  DL4CPP_CUDA_CHECK(cudaStreamSynchronize(stream_));
  std::copy(hostResults_, hostResults_ + count, host);
}

double CudaBackend::sumOnDevice(const double* terms, int64_t n) {
  double* out = reinterpret_cast<double*>(reduced_.data());
  queueSum(terms, n, out);
  double result = 0.0;
  readBack(out, 1, &result);
  return result;
}

}  // namespace dl4cpp::cuda
