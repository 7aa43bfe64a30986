#pragma once
// The runtime layer contract. Layers are created by MultiLayerNetwork::init() from their
// configuration (dl4cpp::ConvolutionLayer etc.) and never own memory for parameters: the network
// owns one flat buffer each for parameters and gradients and hands every layer views into them.
//
// One training step calls, for layer i with input x_i and output y_i:
//   forward(ctx, x_i, y_i, training=true)                 writes y_i (overwrites)
//   ... then, from the last layer back to the first, with g_i = dL/dy_i:
//   backwardActivation(ctx, y_i, g_i)                     g_i := dL/d(pre-activation), in place
//   backwardParams(ctx, x_i, g_i)                         writes (overwrites) the gradient views
//   backwardInput(ctx, g_i, g_{i-1})                      writes (overwrites) dL/dx_i
// Parameter and input gradients are separate steps so a frozen layer can skip the first and the
// first layer the second. The output layer's g is produced by the loss (OutputLayer::lossGradient)
// already with respect to its pre-activation, so backwardActivation is not called for it.
// Gradients are of the loss summed over the batch, scaled by 1/N once by the network.
#include <dl4cpp/nn/backend/LayerPlan.h>
#include <dl4cpp/nn/tensor/DeviceContext.h>
#include <dl4cpp/nn/tensor/Tensor.h>
#include <dl4cpp/nn/weights/Random.h>

#include <string>
#include <vector>

namespace dl4cpp::layers {

// One named parameter of a layer, in the order it occupies the flat buffer.
struct ParamSpec {
  std::string name;  // "W" or "b", as DL4J
  Shape shape;
  bool isBias = false;  // biases get the bias updater and no l2
};

class Layer {
 public:
  virtual ~Layer() = default;

  virtual std::vector<ParamSpec> paramSpecs() const { return {}; }
  // Views into the flat parameter and gradient buffers, in paramSpecs() order.
  virtual void bindParams(const std::vector<Tensor>& params, const std::vector<Tensor>& grads) {
    (void)params;
    (void)grads;
  }
  // Initialises the bound parameter views (weights per the configured WeightInit, biases to
  // biasInit). Host memory.
  virtual void initParams(Random& random) { (void)random; }

  // Output shape for an input of shape `input` (batch dimension included).
  virtual Shape outputShape(const Shape& input) const = 0;
  // What a backend planning the network's steps sees of this layer (LayerPlan.h), with the
  // parameter views bound. OTHER, which every backend runs by itself, unless a layer says more.
  virtual LayerDescription describe() const { return {}; }

  virtual void forward(DeviceContext& ctx, const Tensor& input, Tensor& output, bool training) = 0;
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
};

}  // namespace dl4cpp::layers
