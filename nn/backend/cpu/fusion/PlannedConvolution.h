#pragma once
// What the CPU backend's planned steps (ConvolutionPoolingStep.h, ConvolutionActivationStep.h)
// keep of the convolution layer they run: its parameter and gradient views, its activation and its
// geometry (from its LayerDescription), and the two gradient passes each step ends with when it
// runs the layer's ops.
#include "nn/backend/Backend.h"
#include "nn/backend/LayerPlan.h"
#include "nn/backend/cpu/Activations.h"

namespace dl4cpp::cpu {

struct PlannedConvolution {
  explicit PlannedConvolution(const LayerDescription& d)
      : w(d.w),
        b(d.b),
        dw(d.dw),
        db(d.db),
        activation{d.activation, d.alpha},
        geometry(d.geometry) {}

  // dw, db from the layer's input x and dz, the gradient of its pre-activation output, then dx
  // into inputGradient, through `ops` (charged to the layer the caller entered).
  void gradients(Backend& ops, const Tensor& x, const Tensor& dz, Tensor& inputGradient) {
    ops.convolutionBackward(x, dz, w, inputGradient, dw, db, geometry);
  }

  Tensor w, b, dw, db;
  FusedActivation activation;
  WindowGeometry geometry;
};

}  // namespace dl4cpp::cpu
