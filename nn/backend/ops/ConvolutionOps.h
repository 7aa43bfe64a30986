#pragma once
// The convolution family: 2-D convolution and the inner product (a 1x1 convolution over 1x1
// images), the GEMM-like ops. ConvolutionImpl is what a device implements (cpu/CpuConvolution.cpp,
// cuda/CudaConvolution.cu); ConvolutionOps is what layers call, through Backend. Conventions of
// every op: Backend.h.
#include "nn/backend/OpFlops.h"
#include "nn/backend/OpTypes.h"
#include "nn/backend/ops/OpDispatch.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp {

class ConvolutionImpl {
 public:
  virtual ~ConvolutionImpl() = default;
  // y = conv(x, w) + b: x (N, C, H, W), w (O, C, kH, kW), b (O) or empty, y (N, O, outH, outW).
  virtual void convolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                                  const WindowGeometry& g) = 0;
  // dx = dL/dx from dy and w.
  virtual void convolutionBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx,
                                       const WindowGeometry& g) = 0;
  // dw, db (db may be empty) = dL/dW, dL/db from x and dy.
  virtual void convolutionBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                                          const WindowGeometry& g) = 0;
  // convolutionBackwardData, called by ConvolutionOps::convolutionBackward right after
  // convolutionBackwardWeights on the same dy, with no op in between: a device may reuse what that
  // call made of dy (the CPU backend: oneDNN's reorder of dy into its kernels' layout).
  virtual void convolutionBackwardDataAfterWeights(const Tensor& dy, const Tensor& w, Tensor& dx,
                                                   const WindowGeometry& g) {
    convolutionBackwardData(dy, w, dx, g);
  }
  // y = x W^T + b: x (N, nIn), w (nOut, nIn), b (nOut) or empty, y (N, nOut).
  virtual void innerProductForward(const Tensor& x, const Tensor& w, const Tensor& b,
                                   Tensor& y) = 0;
  virtual void innerProductBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx) = 0;
  virtual void innerProductBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                           Tensor& db) = 0;
};

class ConvolutionOps : protected OpFamily<ConvolutionImpl> {
 public:
  void convolutionForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y,
                          const WindowGeometry& g) {
    run(
        OpPhase::FORWARD, [&] { impl().convolutionForward(x, w, b, y, g); },
        [&] { return convolutionFlops(x.shape(), w.shape(), y.shape()); });
  }
  void convolutionBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx,
                               const WindowGeometry& g) {
    run(
        OpPhase::BACKWARD_DATA, [&] { impl().convolutionBackwardData(dy, w, dx, g); },
        [&] { return convolutionFlops(dx.shape(), w.shape(), dy.shape()); });
  }
  void convolutionBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db,
                                  const WindowGeometry& g) {
    run(
        OpPhase::BACKWARD_WEIGHTS, [&] { impl().convolutionBackwardWeights(x, dy, dw, db, g); },
        [&] { return convolutionFlops(x.shape(), dw.shape(), dy.shape()); });
  }
  // Both backward passes of a convolution: dw, db (db may be empty) from x and dy, then dx from dy
  // and w unless dx is empty, each charged to its own phase. A device shares their work on dy only
  // through this call, where nothing can run or write between the two.
  void convolutionBackward(const Tensor& x, const Tensor& dy, const Tensor& w, Tensor& dx,
                           Tensor& dw, Tensor& db, const WindowGeometry& g) {
    convolutionBackwardWeights(x, dy, dw, db, g);
    if (dx.empty()) return;
    run(
        OpPhase::BACKWARD_DATA, [&] { impl().convolutionBackwardDataAfterWeights(dy, w, dx, g); },
        [&] { return convolutionFlops(dx.shape(), w.shape(), dy.shape()); });
  }
  void innerProductForward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor& y) {
    run(
        OpPhase::FORWARD, [&] { impl().innerProductForward(x, w, b, y); },
        [&] { return innerProductFlops(x.shape(), w.shape()); });
  }
  void innerProductBackwardData(const Tensor& dy, const Tensor& w, Tensor& dx) {
    run(
        OpPhase::BACKWARD_DATA, [&] { impl().innerProductBackwardData(dy, w, dx); },
        [&] { return innerProductFlops(dx.shape(), w.shape()); });
  }
  void innerProductBackwardWeights(const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& db) {
    run(
        OpPhase::BACKWARD_WEIGHTS, [&] { impl().innerProductBackwardWeights(x, dy, dw, db); },
        [&] { return innerProductFlops(x.shape(), dw.shape()); });
  }
};

}  // namespace dl4cpp
