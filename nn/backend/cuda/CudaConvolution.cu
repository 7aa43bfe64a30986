// Convolution as im2col + GEMM for a whole minibatch at once:
//   columns[n] (C*kH*kW, outH*outW) holds, for image n, every input value each output position
//   sees (zero where the window hangs over the padding);
//   forward:          y[n]  = W (O, CKK) columns[n]                  (one strided-batched GEMM)
//   backward-data:    dcol[n] = W^T dy[n], then col2im sums dcol back into dx
//   backward-weights: dW = sum_n dy[n] columns[n]^T                  (batched GEMM + ones GEMM)
// col2im is written as a gather (each dx element adds the column entries that came from it), so
// no atomics are needed and the result is deterministic. The index arithmetic is in
// WindowIndexing.h (tested on the host).
#include <memory>

#include "nn/backend/cuda/CudaBackend.h"
#include "nn/backend/cuda/CudaCheck.h"
#include "nn/backend/cuda/CudaMemory.h"
#include "nn/backend/cuda/Launch.h"
#include "nn/backend/cuda/WindowIndexing.h"

namespace dl4cpp::cuda {

class CudaConvolution final : public ConvolutionImpl {
 public:
  explicit CudaConvolution(CudaBackend& core) : core_(core) {}
  void convolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                          const WindowGeometry& g) override;
  void convolutionBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx,
                               const WindowGeometry& g) override;
  void convolutionBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                                  const WindowGeometry& g) override;
  void innerProductForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y) override;
  void innerProductBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx) override;
  void innerProductBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                   Tensor& db) override;

 private:
  CudaBackend& core_;
};

namespace {

ConvShape convShape(const Shape& x, const Shape& y, const WindowGeometry& g) {
  return {x[0],      x[1],      x[2],      x[3],     y[2],      y[3],        g.kernelH,
          g.kernelW, g.strideH, g.strideW, g.padTop, g.padLeft, g.dilationH, g.dilationW};
}

__global__ void im2colKernel(const float* x, float* columns, ConvShape s) {
  const int64_t total = s.batch * s.rows() * s.positions();
  DL4CPP_GRID_STRIDE_LOOP(i, total) columns[i] = im2colElement(x, s, i);
}

__global__ void col2imKernel(const float* columns, float* dx, ConvShape s) {
  const int64_t total = s.batch * s.channels * s.height * s.width;
  DL4CPP_GRID_STRIDE_LOOP(i, total) dx[i] = col2imElement(columns, s, i);
}

void launchIm2col(const float* x, float* columns, const ConvShape& s, cudaStream_t stream) {
  const int64_t total = s.batch * s.rows() * s.positions();
  if (total == 0) return;
  im2colKernel<<<blocksFor(total), kThreadsPerBlock, 0, stream>>>(x, columns, s);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

}  // namespace

void CudaConvolution::convolutionForward(const Tensor& x, const Tensor& w, const Tensor& b,
                                         Tensor& y, const WindowGeometry& g) {
  const ConvShape s = convShape(x.shape(), y.shape(), g);
  const int64_t outC = w.dim(0), rows = s.rows(), positions = s.positions();
  float* columns = core_.scratch(core_.columns_, s.batch * rows * positions);
  launchIm2col(x.data(), columns, s, core_.stream_);
  // y[n] (O, P) = W (O, CKK) columns[n] (CKK, P), for every n
  core_.gemm(false, false, outC, positions, rows, 1.0f, w.data(), columns, 0.0f, y.data(), s.batch,
             0, rows * positions, outC * positions);
  if (!b.empty()) core_.addBias(y, b, outC, positions);
}

void CudaConvolution::convolutionBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx,
                                              const WindowGeometry& g) {
  const ConvShape s = convShape(dx.shape(), dy.shape(), g);
  const int64_t outC = w.dim(0), rows = s.rows(), positions = s.positions();
  float* columns = core_.scratch(core_.columns_, s.batch * rows * positions);
  // dcol[n] (CKK, P) = W^T (CKK, O) dy[n] (O, P)
  core_.gemm(true, false, rows, positions, outC, 1.0f, w.data(), dy.data(), 0.0f, columns, s.batch,
             0, outC * positions, rows * positions);
  const int64_t total = dx.numel();
  if (total == 0) return;
  col2imKernel<<<blocksFor(total), kThreadsPerBlock, 0, core_.stream_>>>(columns, dx.data(), s);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaConvolution::convolutionBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                                 Tensor& db, const WindowGeometry& g) {
  const ConvShape s = convShape(x.shape(), dy.shape(), g);
  const int64_t outC = dw.dim(0), rows = s.rows(), positions = s.positions();
  float* columns = core_.scratch(core_.columns_, s.batch * rows * positions);
  launchIm2col(x.data(), columns, s, core_.stream_);
  // partial[n] (O, CKK) = dy[n] (O, P) columns[n]^T (P, CKK)
  const int64_t perImage = outC * rows;
  float* partials = core_.scratch(core_.weightPartials_, s.batch * perImage);
  core_.gemm(false, true, outC, rows, positions, 1.0f, dy.data(), columns, 0.0f, partials, s.batch,
             outC * positions, rows * positions, perImage);
  // dW (1, O*CKK) = ones (1, N) partials (N, O*CKK): the sum over the minibatch as one GEMM.
  float* ones = core_.scratch(core_.ones_, s.batch);
  if (core_.onesFilled_ < s.batch) {
    fillFloats(ones, core_.device_, core_.ones_.numel(), 1.0f);  // only when the buffer grew
    core_.onesFilled_ = core_.ones_.numel();
  }
  core_.gemm(false, false, 1, perImage, s.batch, 1.0f, ones, partials, 0.0f, dw.data());
  if (!db.empty()) core_.reduceChannels(dy, outC, positions, db);
}

// --- Inner product: y = x W^T + b
// ------------------------------------------------------------------

void CudaConvolution::innerProductForward(const Tensor& x, const Tensor& w, const Tensor& b,
                                          Tensor& y) {
  const int64_t n = x.dim(0), nOut = w.dim(0), nIn = w.dim(1);
  core_.gemm(false, true, n, nOut, nIn, 1.0f, x.data(), w.data(), 0.0f, y.data());
  if (!b.empty()) core_.addBias(y, b, nOut, 1);
}

void CudaConvolution::innerProductBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx) {
  // dx (N, nIn) = dy (N, nOut) W (nOut, nIn)
  const int64_t n = dy.dim(0), nOut = w.dim(0), nIn = w.dim(1);
  core_.gemm(false, false, n, nIn, nOut, 1.0f, dy.data(), w.data(), 0.0f, dx.data());
}

void CudaConvolution::innerProductBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                                  Tensor& db) {
  // dW (nOut, nIn) = dy^T (nOut, N) x (N, nIn); db = column sums of dy
  const int64_t n = x.dim(0), nOut = dw.dim(0), nIn = dw.dim(1);
  core_.gemm(true, false, nOut, nIn, n, 1.0f, dy.data(), x.data(), 0.0f, dw.data());
  if (!db.empty()) core_.reduceChannels(dy, nOut, 1, db);
}

std::unique_ptr<ConvolutionImpl> makeCudaConvolution(CudaBackend& core) {
  return std::make_unique<CudaConvolution>(core);
}

}  // namespace dl4cpp::cuda
