// Convolution as im2col + GEMM for a whole minibatch at once:
//   columns[n] (C*kH*kW, outH*outW) holds, for image n, every input value each output position
//   sees (zero where the window hangs over the padding);
//   forward:          y[n]  = W (O, CKK) columns[n]                  (one strided-batched GEMM)
//   backward-data:    dcol[n] = W^T dy[n], then col2im sums dcol back into dx
//   backward-weights: dW = sum_n dy[n] columns[n]^T                  (batched GEMM + ones GEMM)
// col2im is written as a gather (each dx element adds the column entries that came from it), so
// no atomics are needed and the result is deterministic. The index arithmetic is in
// WindowIndexing.h (tested on the host).
#include "nn/backend/cuda/CudaBackend.h"
#include "nn/backend/cuda/CudaCheck.h"
#include "nn/backend/cuda/CudaMemory.h"
#include "nn/backend/cuda/Launch.h"
#include "nn/backend/cuda/WindowIndexing.h"

namespace dl4cpp::cuda {

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

void CudaBackend::convolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                                     const WindowGeometry& g) {
  const ConvShape s = convShape(x.shape(), y.shape(), g);
  const int64_t outC = w.dim(0), rows = s.rows(), positions = s.positions();
  float* columns = scratch(columns_, s.batch * rows * positions);
  launchIm2col(x.data(), columns, s, stream_);
  // y[n] (O, P) = W (O, CKK) columns[n] (CKK, P), for every n
  gemm(false, false, outC, positions, rows, 1.0f, w.data(), columns, 0.0f, y.data(), s.batch, 0,
       rows * positions, outC * positions);
  if (!b.empty()) addBias(y, b, outC, positions);
}

void CudaBackend::convolutionBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx,
                                          const WindowGeometry& g) {
  const ConvShape s = convShape(dx.shape(), dy.shape(), g);
  const int64_t outC = w.dim(0), rows = s.rows(), positions = s.positions();
  float* columns = scratch(columns_, s.batch * rows * positions);
  // dcol[n] (CKK, P) = W^T (CKK, O) dy[n] (O, P)
  gemm(true, false, rows, positions, outC, 1.0f, w.data(), dy.data(), 0.0f, columns, s.batch, 0,
       outC * positions, rows * positions);
  const int64_t total = dx.numel();
  if (total == 0) return;
  col2imKernel<<<blocksFor(total), kThreadsPerBlock, 0, stream_>>>(columns, dx.data(), s);
  DL4CPP_CUDA_CHECK_LAUNCH();
}

void CudaBackend::convolutionBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                             Tensor& db, const WindowGeometry& g) {
  const ConvShape s = convShape(x.shape(), dy.shape(), g);
  const int64_t outC = dw.dim(0), rows = s.rows(), positions = s.positions();
  float* columns = scratch(columns_, s.batch * rows * positions);
  launchIm2col(x.data(), columns, s, stream_);
  // partial[n] (O, CKK) = dy[n] (O, P) columns[n]^T (P, CKK)
  const int64_t perImage = outC * rows;
  float* partials = scratch(weightPartials_, s.batch * perImage);
  gemm(false, true, outC, rows, positions, 1.0f, dy.data(), columns, 0.0f, partials, s.batch,
       outC * positions, rows * positions, perImage);
  // dW (1, O*CKK) = ones (1, N) partials (N, O*CKK): the sum over the minibatch as one GEMM.
  float* ones = scratch(ones_, s.batch);
  if (onesFilled_ < s.batch) {
    fillFloats(ones, device_, ones_.numel(), 1.0f);  // only when the buffer grew
    onesFilled_ = ones_.numel();
  }
  gemm(false, false, 1, perImage, s.batch, 1.0f, ones, partials, 0.0f, dw.data());
  if (!db.empty()) reduceChannels(dy, outC, positions, db);
}

}  // namespace dl4cpp::cuda
