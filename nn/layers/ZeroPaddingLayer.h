#pragma once
#include <dl4cpp/nn/conf/layers/ZeroPaddingLayer.h>
#include <dl4cpp/nn/layers/RuntimeLayer.h>

namespace dl4cpp::layers {

// Runtime of dl4cpp::ZeroPaddingLayer. No parameters.
class ZeroPaddingLayer : public RuntimeLayer {
 public:
  explicit ZeroPaddingLayer(const dl4cpp::ZeroPaddingLayer& conf)
      : padding_{conf.padding[0], conf.padding[1], conf.padding[2], conf.padding[3]} {}

  Shape outputShape(const Shape& input) const override {
    return {input[0], input[1], input[2] + padding_.top + padding_.bottom,
            input[3] + padding_.left + padding_.right};
  }
  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext&) override {
    ctx.backend().zeroPaddingForward(input, output, padding_);
  }
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override {
    ctx.backend().zeroPaddingBackward(grad, inputGrad, padding_);
  }

 private:
  Padding2d padding_;
};

}  // namespace dl4cpp::layers
