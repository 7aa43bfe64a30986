#pragma once
#include <dl4cpp/nn/conf/layers/SubsamplingLayer.h>
#include <dl4cpp/nn/layers/RuntimeLayer.h>

namespace dl4cpp::layers {

// Runtime of dl4cpp::SubsamplingLayer. No parameters.
class SubsamplingLayer : public RuntimeLayer {
 public:
  explicit SubsamplingLayer(const dl4cpp::SubsamplingLayer& conf)
      : kind_(conf.poolingType), geometry_(conf.geometry) {}

  Shape outputShape(const Shape& input) const override {
    return {input[0], input[1], geometry_.outH(input[2]), geometry_.outW(input[3])};
  }
  LayerDescription describe() const override {
    LayerDescription d;
    d.kind = LayerDescription::Kind::POOLING;
    d.geometry = geometry_;
    d.pooling = kind_;
    return d;
  }
  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override {
    ctx.backend().poolingForward(kind_, input, output, geometry_, fwd.training, workspace_);
  }
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override {
    ctx.backend().poolingBackward(kind_, grad, inputGrad, geometry_, workspace_);
  }

 private:
  PoolingType kind_;
  WindowGeometry geometry_;
  Tensor workspace_;  // MAX: arg-max of the last training forward, read by backwardInput
};

}  // namespace dl4cpp::layers
