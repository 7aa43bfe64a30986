#pragma once
#include <dl4cpp/nn/conf/layers/ConvolutionLayer.h>
#include <dl4cpp/nn/layers/RuntimeLayer.h>
#include <dl4cpp/nn/layers/SubsamplingLayer.h>

namespace dl4cpp::layers {

// Runtime of dl4cpp::ConvolutionLayer. Parameters in DL4J's order: b then W.
class ConvolutionLayer : public RuntimeLayer {
 public:
  explicit ConvolutionLayer(const dl4cpp::ConvolutionLayer& conf);

  void bindParams(const std::vector<Tensor>& params, const std::vector<Tensor>& grads) override;
  Shape outputShape(const Shape& input) const override;

  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override;
  void backwardActivation(DeviceContext& ctx, const Tensor& output, Tensor& grad) override;
  void backwardParams(DeviceContext& ctx, const Tensor& input, const Tensor& grad) override;
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override;

  // Fusion with a MAX pooling layer that reads this layer's output and nothing else
  // (MultiLayerNetwork decides): possible with the identity activation, whose backward pass needs
  // neither the output nor a gradient step of its own, so the backend may pool each image as soon
  // as it is convolved (Backend::convolutionMaxPoolingForward).
  bool fusesWith(const SubsamplingLayer& pooling) const;
  // forward() followed by the pooling layer's forward(): writes `pooled` (and the pooling layer's
  // arg-max workspace when training); `output` may be left unwritten.
  void forwardPooled(DeviceContext& ctx, const Tensor& input, Tensor& output,
                     SubsamplingLayer& pooling, Tensor& pooled, bool training);
  // The pooling layer's backwardInput() followed by backwardParams(), from the pooled output's
  // gradient; `grad` (this layer's output gradient) may be left unwritten, so this replaces
  // backwardInput() too only where the input gradient is not needed.
  void backwardParamsPooled(DeviceContext& ctx, const Tensor& input,
                            const SubsamplingLayer& pooling, const Tensor& pooledGrad,
                            Tensor& grad);

 private:
  int64_t nIn_, nOut_;
  bool hasBias_;
  WindowGeometry geometry_;
  Activation activation_;
  float alpha_;
  Tensor w_, b_;    // W: (nOut, nIn, kH, kW), b: (nOut) or empty; views into the flat parameters
  Tensor dw_, db_;  // views into the flat gradients
};

}  // namespace dl4cpp::layers
