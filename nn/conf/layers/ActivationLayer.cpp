#include "nn/conf/layers/ActivationLayer.h"

#include "nn/layers/LayerActivation.h"
#include "nn/layers/RuntimeLayer.h"

namespace dl4cpp {

namespace {

// The runtime object: output = f(input). Its backward pass is all in backwardInput, from the input
// gradient's point of view: dL/dx = f'(x) * dL/dy, straight into the input gradient (nothing to do
// for the network's first layer, which has no parameters to train).
class ActivationRuntime : public layers::RuntimeLayer {
 public:
  explicit ActivationRuntime(const ActivationLayer& conf)
      : activation_(*conf.activation, static_cast<float>(conf.leakyReluAlpha)) {}

  Shape outputShape(const Shape& input) const override { return input; }
  LayerDescription describe() const override {
    LayerDescription d;
    d.kind = LayerDescription::Kind::ACTIVATION;
    d.activation = activation_.kind();
    d.alpha = activation_.alpha();
    return d;
  }

  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override {
    activation_.forward(ctx, input, output, fwd.training);
    output_ = output;
  }
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override {
    activation_.backward(ctx, output_, grad, inputGrad);
  }

 private:
  layers::LayerActivation activation_;
  Tensor output_;  // y of the last forward pass (kept by the network until the backward pass)
};

}  // namespace

InputType ActivationLayer::resolve(int index, const InputType& input,
                                   const LayerDefaults& defaults) {
  inheritDefaults(defaults);
  validateCommon(index);
  return input;
}

std::unique_ptr<layers::RuntimeLayer> ActivationLayer::instantiate() const {
  return std::make_unique<ActivationRuntime>(*this);
}

}  // namespace dl4cpp