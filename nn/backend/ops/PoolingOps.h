#pragma once
// The pooling family: windowed pooling (SubsamplingLayer) and global pooling. PoolingImpl is what
// a device implements (cpu/CpuPooling.cpp, cuda/CudaPooling.cu); PoolingOps is what layers call,
// through Backend.
#include "nn/backend/OpTypes.h"
#include "nn/backend/ops/OpDispatch.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp {

class PoolingImpl {
 public:
  virtual ~PoolingImpl() = default;
  // x (N, C, H, W) -> y (N, C, outH, outW); kind is MAX or AVG (SubsamplingLayer refuses the
  // others). AVG divides by the window area excluding padding (DL4J's default). `workspace` is the
  // calling layer's private scratch: training-mode MAX records its arg-max there for
  // poolingBackward (the backend sizes it; it stays with the layer so two layers of equal shape
  // never share one).
  virtual void poolingForward(PoolingKind kind, const Tensor& x, Tensor& y, const WindowGeometry& g,
                              bool training, Tensor& workspace) = 0;
  // dx from dy; MAX reads the workspace its training-mode forward wrote.
  virtual void poolingBackward(PoolingKind kind, const Tensor& dy, Tensor& dx,
                               const WindowGeometry& g, const Tensor& workspace) = 0;
  // x (N, C, H, W) -> y (N * C values, in (n, c) order): each (n, c) plane reduced by `kind`
  // (PNORM with exponent pnorm >= 1).
  virtual void globalPoolingForward(PoolingKind kind, int pnorm, const Tensor& x, Tensor& y) = 0;
  // dx from dy and the forward pass's x and y: MAX routes each plane's dy to the plane's first
  // maximum, AVG spreads dy / (H * W), SUM copies dy, PNORM scales by x |x|^(p-2) / y^(p-1) (0
  // where y is 0).
  virtual void globalPoolingBackward(PoolingKind kind, int pnorm, const Tensor& x, const Tensor& y,
                                     const Tensor& dy, Tensor& dx) = 0;
};

class PoolingOps : protected OpFamily<PoolingImpl> {
 public:
  void poolingForward(PoolingKind kind, const Tensor& x, Tensor& y, const WindowGeometry& g,
                      bool training, Tensor& workspace) {
    run(OpPhase::FORWARD, [&] { impl().poolingForward(kind, x, y, g, training, workspace); });
  }
  void poolingBackward(PoolingKind kind, const Tensor& dy, Tensor& dx, const WindowGeometry& g,
                       const Tensor& workspace) {
    run(OpPhase::BACKWARD_DATA, [&] { impl().poolingBackward(kind, dy, dx, g, workspace); });
  }
  void globalPoolingForward(PoolingKind kind, int pnorm, const Tensor& x, Tensor& y) {
    run(OpPhase::FORWARD, [&] { impl().globalPoolingForward(kind, pnorm, x, y); });
  }
  void globalPoolingBackward(PoolingKind kind, int pnorm, const Tensor& x, const Tensor& y,
                             const Tensor& dy, Tensor& dx) {
    run(OpPhase::BACKWARD_DATA, [&] { impl().globalPoolingBackward(kind, pnorm, x, y, dy, dx); });
  }
};

}  // namespace dl4cpp
