#include "nn/conf/layers/DropoutLayer.h"

#include "nn/layers/RuntimeLayer.h"

namespace dl4cpp {

namespace {

// y = x, dL/dx = dL/dy: the dropout itself is the network's, which wraps this runtime object, as
// every layer's with dropOut set, in layers::InputDropout.
class IdentityRuntime : public layers::RuntimeLayer {
 public:
  Shape outputShape(const Shape& input) const override { return input; }
  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext&) override {
    ctx.backend().copy(input, output);
  }
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override {
    ctx.backend().copy(grad, inputGrad);
  }
};

}  // namespace

InputType DropoutLayer::resolve(int index, const InputType& input, const LayerDefaults& defaults) {
  inheritDefaults(defaults);
  activation = Activation::IDENTITY;
  validateCommon(index);
  return input;
}

std::unique_ptr<layers::RuntimeLayer> DropoutLayer::instantiate() const {
  return std::make_unique<IdentityRuntime>();
}

}  // namespace dl4cpp
