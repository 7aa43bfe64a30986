#pragma once
#include <dl4cpp/nn/conf/layers/ConvolutionLayer.h>
#include <dl4cpp/nn/layers/LayerActivation.h>
#include <dl4cpp/nn/layers/RuntimeLayer.h>

namespace dl4cpp::layers {

// Runtime of dl4cpp::ConvolutionLayer. Parameters in DL4J's order: b then W.
class ConvolutionLayer : public RuntimeLayer {
 public:
  explicit ConvolutionLayer(const dl4cpp::ConvolutionLayer& conf);

  void bindParams(const std::vector<Tensor>& params, const std::vector<Tensor>& grads) override;
  Shape outputShape(const Shape& input) const override;
  LayerDescription describe() const override;

  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override;
  void backwardActivation(DeviceContext& ctx, const Tensor& output, Tensor& grad) override;
  void backwardParams(DeviceContext& ctx, const Tensor& input, const Tensor& grad) override;
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override;

 private:
  int64_t nIn_, nOut_;
  bool hasBias_;
  WindowGeometry geometry_;
  LayerActivation activation_;
  Tensor w_, b_;    // W: (nOut, nIn, kH, kW), b: (nOut) or empty; views into the flat parameters
  Tensor dw_, db_;  // views into the flat gradients
};

}  // namespace dl4cpp::layers
