#pragma once
// The runtime side of a layer that ends the network with a loss (dl4cpp::LossOutput; DL4J's
// IOutputLayer): MultiLayerNetwork asks the last layer's runtime object, which must derive from
// this and return itself from RuntimeLayer::asLossOutput(), for the loss and its gradient. The
// gradient is with respect to the layer's pre-activation, so the network never runs that layer's
// backwardActivation (layers::RuntimeLayer). The default is the backend's loss, fused with the
// activation where that is stable (softmax with NLL/MCXENT, sigmoid with XENT).
#include "nn/backend/DeviceContext.h"
#include "nn/backend/OpTypes.h"
#include "nn/layers/LayerActivation.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::layers {

class LossOutputRuntime {
 public:
  explicit LossOutputRuntime(LossKind loss) : loss_(loss) {}
  virtual ~LossOutputRuntime() = default;

  // Writes dL/d(pre-activation) of the loss summed over the batch into `grad`; returns that sum.
  virtual double lossGradient(DeviceContext& ctx, const Tensor& output, const Tensor& labels,
                              Tensor& grad) {
    const LayerActivation& activation = lossActivation();
    return ctx.backend().lossForwardBackward(loss_, activation.kind(), activation.alpha(),
                                             activation.keptInput(), output, labels, grad);
  }
  // The summed loss only.
  virtual double lossScore(DeviceContext& ctx, const Tensor& output, const Tensor& labels) {
    return ctx.backend().lossScore(loss_, output, labels);
  }
  LossKind lossFunction() const { return loss_; }
  // The batch's labels mask (N, T) on the host, or null, for the next lossGradient / lossScore:
  // a loss over sequences (RnnOutputLayer) counts only the real steps. The network sets it before
  // each (and keeps the mask alive until it returns); a loss over rows ignores it.
  void setLabelsMask(const Tensor* mask) { labelsMask_ = mask; }

 protected:
  LossOutputRuntime(const LossOutputRuntime&) = default;
  LossOutputRuntime& operator=(const LossOutputRuntime&) = default;

  // The activation that produced the loss's input in the layer's forward pass, with the
  // pre-activation it kept there where its backward pass reads it (LayerActivation.h).
  virtual const LayerActivation& lossActivation() const = 0;

  LossKind loss_;
  const Tensor* labelsMask_ = nullptr;
};

}  // namespace dl4cpp::layers
