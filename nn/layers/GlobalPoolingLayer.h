#pragma once
#include <dl4cpp/nn/conf/layers/GlobalPoolingLayer.h>
#include <dl4cpp/nn/layers/RuntimeLayer.h>

namespace dl4cpp::layers {

// Runtime of dl4cpp::GlobalPoolingLayer. No parameters. Keeps views of the last forward pass's
// input and output (the network's buffers, unchanged until the backward pass that follows): MAX
// and PNORM read them backward.
class GlobalPoolingLayer : public RuntimeLayer {
 public:
  explicit GlobalPoolingLayer(const dl4cpp::GlobalPoolingLayer& conf)
      : kind_(conf.poolingType),
        pnorm_(static_cast<int>(conf.pnorm)),
        collapse_(conf.collapseDimensions) {}

  Shape outputShape(const Shape& input) const override {
    if (collapse_) return {input[0], input[1]};
    return {input[0], input[1], 1, 1};
  }
  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext&) override {
    ctx.backend().globalPoolingForward(kind_, pnorm_, input, output);
    input_ = input;
    output_ = output;
  }
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override {
    ctx.backend().globalPoolingBackward(kind_, pnorm_, input_, output_, grad, inputGrad);
  }

 private:
  PoolingKind kind_;
  int pnorm_;
  bool collapse_;
  Tensor input_, output_;
};

}  // namespace dl4cpp::layers
