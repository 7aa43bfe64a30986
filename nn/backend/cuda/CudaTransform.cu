// The CUDA backend's transform family (ops/TransformOps.h), on the shared formulas of
// TransformMath.h: a thread per output element for lookups, combinations and scaling; a thread per
// table column for the embedding gradient (it owns that column of every row, so the sums run in
// the CPU's (example, step) order without atomics); a block per example for L2 normalisation;
// cudaMemcpy2DAsync for block copies. Host index and pointer arrays are uploaded per call.
#include <memory>
#include <vector>

#include "nn/backend/TransformMath.h"
#include "nn/backend/cuda/BlockSum.h"
#include "nn/backend/cuda/CudaBackend.h"
#include "nn/backend/cuda/CudaCheck.h"
#include "nn/backend/cuda/Launch.h"

namespace dl4cpp::cuda {

namespace {

// z[e][k][t] = W[index[e steps + t]][k] + b[k], or 0 where the index is -1.
__global__ void embeddingForwardKernel(const int64_t* index, const float* w, const float* b,
                                       float* z, int64_t n, int64_t c, int64_t steps) {
  DL4CPP_GRID_STRIDE_LOOP(i, n * c * steps) {
    const int64_t t = i % steps, k = (i / steps) % c, e = i / (steps * c);
    const int64_t row = index[e * steps + t];
    z[i] = row < 0 ? 0.0f : w[row * c + k] + (b != nullptr ? b[k] : 0.0f);
  }
}

// One thread per column k: dw[row][k] and db[k] summed over the (e, t) in order.
__global__ void embeddingBackwardKernel(const int64_t* index, const float* dz, float* dw, float* db,
                                        int64_t n, int64_t c, int64_t steps) {
  DL4CPP_GRID_STRIDE_LOOP(k, c) {
    float bias = 0.0f;
    for (int64_t e = 0; e < n; ++e)
      for (int64_t t = 0; t < steps; ++t) {
        const int64_t row = index[e * steps + t];
        if (row < 0) continue;
        const float g = dz[(e * c + k) * steps + t];
        dw[row * c + k] += g;
        bias += g;
      }
    if (db != nullptr) db[k] = bias;
  }
}

__global__ void combineForwardKernel(CombineOp op, const float* const* xs, int count, float* y,
                                     int64_t size) {
  DL4CPP_GRID_STRIDE_LOOP(i, size) y[i] = combineElement(op, xs, count, i);
}

__global__ void combineBackwardKernel(CombineOp op, const float* const* xs, int count, int k,
                                      const float* y, const float* dy, float* dx, int64_t size) {
  DL4CPP_GRID_STRIDE_LOOP(i, size) dx[i] = combineGradientElement(op, xs, count, k, i, y[i], dy[i]);
}

__global__ void scaleShiftKernel(const float* x, float scale, float shift, float* y, int64_t size) {
  DL4CPP_GRID_STRIDE_LOOP(i, size) y[i] = scale * x[i] + shift;
}

// One block per example e of `size` values.
__global__ void l2NormalizeForwardKernel(const float* x, double eps, float* y, int64_t size) {
  __shared__ double shared[kThreadsPerBlock];
  const float* xe = x + blockIdx.x * size;
  float* ye = y + blockIdx.x * size;
  double squares = 0;
  for (int64_t i = threadIdx.x; i < size; i += blockDim.x) squares += double(xe[i]) * xe[i];
  squares = blockSum(squares, shared);
  const auto inverse = static_cast<float>(1.0 / l2Denominator(squares, eps));
  for (int64_t i = threadIdx.x; i < size; i += blockDim.x) ye[i] = xe[i] * inverse;
}

__global__ void l2NormalizeBackwardKernel(const float* x, double eps, const float* dy, float* dx,
                                          int64_t size) {
  __shared__ double shared[kThreadsPerBlock];
  const float* xe = x + blockIdx.x * size;
  const float* ge = dy + blockIdx.x * size;
  float* de = dx + blockIdx.x * size;
  double squares = 0, dot = 0;
  for (int64_t i = threadIdx.x; i < size; i += blockDim.x) {
    squares += double(xe[i]) * xe[i];
    dot += double(ge[i]) * xe[i];
  }
  squares = blockSum(squares, shared);
  dot = blockSum(dot, shared);
  for (int64_t i = threadIdx.x; i < size; i += blockDim.x)
    de[i] = l2NormalizeGradient(squares, dot, eps, xe[i], ge[i]);
}

}  // namespace

class CudaTransform final : public TransformImpl {
 public:
  explicit CudaTransform(CudaBackend& core) : core_(core) {}

  void embeddingForward(std::span<const int64_t> index, const Tensor& w, const Tensor& b,
                        Tensor& z) override {
    const int64_t n = z.dim(0), c = w.dim(1);
    if (z.numel() == 0) return;
    const int64_t steps = static_cast<int64_t>(index.size()) / n;
    embeddingForwardKernel<<<blocksFor(z.numel()), kThreadsPerBlock, 0, stream()>>>(
        upload(index), w.data(), b.empty() ? nullptr : b.data(), z.data(), n, c, steps);
    DL4CPP_CUDA_CHECK_LAUNCH();
  }

  void embeddingBackward(std::span<const int64_t> index, const Tensor& dz, Tensor& dw,
                         Tensor& db) override {
    const int64_t n = dz.dim(0), c = dw.dim(1);
    zero(dw);
    if (!db.empty()) zero(db);
    if (dz.numel() == 0) return;
    const int64_t steps = static_cast<int64_t>(index.size()) / n;
    embeddingBackwardKernel<<<blocksFor(c), kThreadsPerBlock, 0, stream()>>>(
        upload(index), dz.data(), dw.data(), db.empty() ? nullptr : db.data(), n, c, steps);
    DL4CPP_CUDA_CHECK_LAUNCH();
  }

  void copyBlocks(const Tensor& src, int64_t srcOffset, int64_t srcStride, Tensor& dst,
                  int64_t dstOffset, int64_t dstStride, int64_t block, int64_t count) override {
    if (block == 0 || count == 0) return;
    const size_t bytes = sizeof(float);
    // A pitch of 0 is not accepted even for one row: any pitch >= the row's width serves then.
    const int64_t srcPitch = count == 1 ? block : srcStride;
    const int64_t dstPitch = count == 1 ? block : dstStride;
    DL4CPP_CUDA_CHECK(cudaMemcpy2DAsync(
        dst.data() + dstOffset, static_cast<size_t>(dstPitch) * bytes, src.data() + srcOffset,
        static_cast<size_t>(srcPitch) * bytes, static_cast<size_t>(block) * bytes,
        static_cast<size_t>(count), cudaMemcpyDeviceToDevice, stream()));
  }

  void combineForward(CombineOp op, std::span<const Tensor> xs, Tensor& y) override {
    if (y.numel() == 0) return;
    combineForwardKernel<<<blocksFor(y.numel()), kThreadsPerBlock, 0, stream()>>>(
        op, upload(xs), static_cast<int>(xs.size()), y.data(), y.numel());
    DL4CPP_CUDA_CHECK_LAUNCH();
  }

  void combineBackward(CombineOp op, std::span<const Tensor> xs, const Tensor& y, const Tensor& dy,
                       std::span<Tensor> dxs) override {
    if (y.numel() == 0) return;
    const float* const* inputs = upload(xs);
    for (size_t k = 0; k < dxs.size(); ++k) {
      if (dxs[k].empty()) continue;
      combineBackwardKernel<<<blocksFor(y.numel()), kThreadsPerBlock, 0, stream()>>>(
          op, inputs, static_cast<int>(xs.size()), static_cast<int>(k), y.data(), dy.data(),
          dxs[k].data(), y.numel());
      DL4CPP_CUDA_CHECK_LAUNCH();
    }
  }

  void scaleShift(const Tensor& x, float scale, float shift, Tensor& y) override {
    if (x.numel() == 0) return;
    scaleShiftKernel<<<blocksFor(x.numel()), kThreadsPerBlock, 0, stream()>>>(
        x.data(), scale, shift, y.data(), x.numel());
    DL4CPP_CUDA_CHECK_LAUNCH();
  }

  void l2NormalizeForward(const Tensor& x, double eps, Tensor& y) override {
    const int64_t n = x.rank() == 0 ? 0 : x.dim(0);
    if (x.numel() == 0) return;
    l2NormalizeForwardKernel<<<static_cast<unsigned>(n), kThreadsPerBlock, 0, stream()>>>(
        x.data(), eps, y.data(), x.numel() / n);
    DL4CPP_CUDA_CHECK_LAUNCH();
  }

  void l2NormalizeBackward(const Tensor& x, double eps, const Tensor& dy, Tensor& dx) override {
    const int64_t n = x.rank() == 0 ? 0 : x.dim(0);
    if (x.numel() == 0) return;
    l2NormalizeBackwardKernel<<<static_cast<unsigned>(n), kThreadsPerBlock, 0, stream()>>>(
        x.data(), eps, dy.data(), dx.data(), x.numel() / n);
    DL4CPP_CUDA_CHECK_LAUNCH();
  }

 private:
  cudaStream_t stream() const { return core_.stream(); }

  void zero(Tensor& t) {
    DL4CPP_CUDA_CHECK(
        cudaMemsetAsync(t.data(), 0, static_cast<size_t>(t.numel()) * sizeof(float), stream()));
  }

  // The host bytes on the device, in a scratch buffer grown on demand (valid until the next
  // upload: the kernels that read it are queued before it).
  const void* uploadBytes(const void* host, size_t bytes) {
    const auto floats = static_cast<int64_t>((bytes + sizeof(float) - 1) / sizeof(float));
    float* device = core_.scratch(uploaded_, floats > 0 ? floats : 1);
    DL4CPP_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream()));
    return device;
  }

  const int64_t* upload(std::span<const int64_t> index) {
    return static_cast<const int64_t*>(uploadBytes(index.data(), index.size_bytes()));
  }

  const float* const* upload(std::span<const Tensor> xs) {
    pointers_.clear();
    for (const Tensor& x : xs) pointers_.push_back(x.data());
    return static_cast<const float* const*>(
        uploadBytes(pointers_.data(), pointers_.size() * sizeof(const float*)));
  }

  CudaBackend& core_;
  Tensor uploaded_;                     // the last upload's device copy
  std::vector<const float*> pointers_;  // combine's input pointers, on the host
};

std::unique_ptr<TransformImpl> makeCudaTransform(CudaBackend& core) {
  return std::make_unique<CudaTransform>(core);
}

}  // namespace dl4cpp::cuda
