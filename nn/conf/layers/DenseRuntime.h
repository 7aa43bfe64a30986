#pragma once
// The runtime object of a dense layer, y = activation(x W^T + b), which two layer types share:
// DenseLayer runs it as it is, and OutputLayer's runtime derives from it and adds the loss.
// Private to the library (not installed); defined in DenseLayer.cpp.
#include "nn/conf/layers/Layer.h"
#include "nn/layers/LayerActivation.h"
#include "nn/layers/RuntimeLayer.h"

namespace dl4cpp::detail {

class DenseRuntime : public layers::RuntimeLayer {
 public:
  explicit DenseRuntime(const FeedForwardLayer& conf);

  void bindParams(const std::vector<Tensor>& params, const std::vector<Tensor>& grads) override;
  Shape outputShape(const Shape& input) const override { return {input[0], nOut_}; }

  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override;
  void backwardActivation(DeviceContext& ctx, const Tensor& output, Tensor& grad) override;
  void backwardParams(DeviceContext& ctx, const Tensor& input, const Tensor& grad) override;
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override;

 protected:
  int64_t nIn_, nOut_;
  bool hasBias_;
  layers::LayerActivation activation_;
  Tensor w_, b_;    // W: (nOut, nIn), b: (nOut) or empty; views into the flat parameters
  Tensor dw_, db_;  // the same shapes, views into the flat gradients
};

}  // namespace dl4cpp::detail
