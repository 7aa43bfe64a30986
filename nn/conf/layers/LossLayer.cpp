#include "nn/conf/layers/LossLayer.h"

#include "nn/layers/LossOutputRuntime.h"
#include "nn/layers/RuntimeLayer.h"

namespace dl4cpp {

namespace {

// The runtime object: output = activation(input); the loss's gradient, with respect to the
// pre-activation, is the input's gradient.
class LossRuntime : public layers::RuntimeLayer, public layers::LossOutputRuntime {
 public:
  explicit LossRuntime(const LossLayer& conf)
      : layers::LossOutputRuntime(conf.lossFunction),
        activation_(*conf.activation, static_cast<float>(conf.leakyReluAlpha)) {}

  Shape outputShape(const Shape& input) const override { return input; }
  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override {
    activation_.forward(ctx, input, output, fwd.training);
  }
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override {
    ctx.backend().copy(grad, inputGrad);
  }
  layers::LossOutputRuntime* asLossOutput() override { return this; }

 protected:
  const layers::LayerActivation& lossActivation() const override { return activation_; }

 private:
  layers::LayerActivation activation_;
};

}  // namespace

InputType LossLayer::resolve(int index, const InputType& input, const LayerDefaults& defaults) {
  inheritDefaults(defaults);
  validateCommon(index);
  validateLoss(where(index), *activation);
  return InputType::feedForward(input.flatSize());
}

std::unique_ptr<layers::RuntimeLayer> LossLayer::instantiate() const {
  return std::make_unique<LossRuntime>(*this);
}

void LossLayer::writeFields(LayerFieldWriter& out) const { writeLoss(out); }

void LossLayer::readFields(const LayerFieldReader& in) { readLoss(in); }

}  // namespace dl4cpp