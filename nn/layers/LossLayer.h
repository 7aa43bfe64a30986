#pragma once
#include <dl4cpp/nn/conf/layers/LossLayer.h>
#include <dl4cpp/nn/layers/LossOutputRuntime.h>
#include <dl4cpp/nn/layers/RuntimeLayer.h>

namespace dl4cpp::layers {

// Runtime of dl4cpp::LossLayer: output = activation(input); the loss's gradient, with respect to
// the pre-activation, is the input's gradient.
class LossLayer : public RuntimeLayer, public LossOutputRuntime {
 public:
  explicit LossLayer(const dl4cpp::LossLayer& conf)
      : LossOutputRuntime(conf.lossFunction),
        activation_(*conf.activation, static_cast<float>(conf.leakyReluAlpha)) {}

  Shape outputShape(const Shape& input) const override { return input; }
  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override {
    activation_.forward(ctx, input, output, fwd.training);
  }
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override {
    ctx.backend().copy(grad, inputGrad);
  }
  LossOutputRuntime* asLossOutput() override { return this; }

 protected:
  const LayerActivation& lossActivation() const override { return activation_; }

 private:
  LayerActivation activation_;
};

}  // namespace dl4cpp::layers
