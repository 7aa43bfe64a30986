#pragma once
// The runtime layer contract. MultiLayerNetwork::init() creates one runtime object per layer from
// its configuration (dl4cpp::Layer::instantiate()). A runtime layer never owns memory for
// parameters or state: the network owns one flat buffer each for parameters, gradients and layer
// state, laid out from the configuration's paramSpecs() and stateSpecs(), initialises them, and
// hands every layer views into them.
//
// One training step calls, for layer i with input x_i and output y_i:
//   forward(ctx, x_i, y_i, fwd)                           writes y_i (overwrites)
//   ... then, from the last layer back to the first, with g_i = dL/dy_i:
//   backwardActivation(ctx, y_i, g_i)                     g_i := dL/d(pre-activation), in place
//                                                         (or left as is by a layer whose backward
//                                                         op applies f' itself, reading y_i)
//   backwardParams(ctx, x_i, g_i)                         writes (overwrites) the gradient views
//   backwardInput(ctx, g_i, g_{i-1})                      writes (overwrites) dL/dx_i
// (the last two through backward(), which a layer may override to compute them together)
// Parameter and input gradients are separate steps so a frozen layer can skip the first and the
// first layer the second. The output layer's g is produced by the loss
// (LossOutputRuntime::lossGradient) already with respect to its pre-activation, so
// backwardActivation is not called for it. Gradients are of the loss summed over the batch, scaled
// by 1/N once by the network.
//
// The backward pass follows a training-mode forward pass on the same tensors: the network keeps
// every layer's input and output unchanged in between, so a layer may refer to them, and must keep
// anything else its backward pass reads itself. An activation whose derivative is not a function of
// its output (SWISH, GELU: Backend::activationBackward) reads its pre-activation z: a layer keeps
// z during a training-mode forward pass through LayerActivation.h, which holds the logic every
// layer with an activation shares (inference keeps nothing).
#include <vector>

#include "nn/backend/DeviceContext.h"
#include "nn/backend/ForwardContext.h"
#include "nn/backend/LayerPlan.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::layers {

class LossOutputRuntime;

class RuntimeLayer {
 public:
  virtual ~RuntimeLayer() = default;

  // Views into the flat parameter and gradient buffers, in the configuration's paramSpecs()
  // order.
  virtual void bindParams(const std::vector<Tensor>& params, const std::vector<Tensor>& grads) {
    (void)params;
    (void)grads;
  }
  // Views into the flat layer-state buffer, in the configuration's stateSpecs() order. A layer
  // may update them in a training-mode forward pass.
  virtual void bindState(const std::vector<Tensor>& state) { (void)state; }

  // Output shape for an input of shape `input` (batch dimension included).
  virtual Shape outputShape(const Shape& input) const = 0;
  // What a backend planning the network's steps sees of this layer (LayerPlan.h), with the
  // parameter views bound. OTHER, which every backend runs by itself, unless a layer says more.
  virtual LayerDescription describe() const { return {}; }

  virtual void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
                       const ForwardContext& fwd) = 0;
  virtual void backwardActivation(DeviceContext& ctx, const Tensor& output, Tensor& grad) {
    (void)ctx;
    (void)output;
    (void)grad;
  }
  virtual void backwardParams(DeviceContext& ctx, const Tensor& input, const Tensor& grad) {
    (void)ctx;
    (void)input;
    (void)grad;
  }
  virtual void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) = 0;
  // Both steps, as the network runs them: the parameter gradients when `params`, dL/dx into
  // *inputGrad when it is given. A layer whose two gradients come out of one computation (batch
  // normalisation) overrides it to compute them together.
  virtual void backward(DeviceContext& ctx, const Tensor& input, const Tensor& grad, bool params,
                        Tensor* inputGrad) {
    if (params) backwardParams(ctx, input, grad);
    if (inputGrad != nullptr) backwardInput(ctx, grad, *inputGrad);
  }

  // The loss of a layer that ends the network (LossOutputRuntime.h): a runtime layer that is also
  // a LossOutputRuntime returns itself, every other layer nullptr (the default). MultiLayerNetwork
  // takes the loss and its gradient from the last layer's. A layer that wraps another (input
  // dropout, a test's gradient corrupter) returns the wrapped layer's, so wrapping never hides the
  // loss.
  virtual LossOutputRuntime* asLossOutput() { return nullptr; }
};

}  // namespace dl4cpp::layers
