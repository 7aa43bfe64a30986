#include <dl4cpp/nn/conf/layers/DropoutLayer.h>
#include <dl4cpp/nn/layers/InputDropout.h>

namespace dl4cpp {

InputType DropoutLayer::resolve(int index, const InputType& input, const LayerDefaults& defaults) {
  inheritDefaults(defaults);
  activation = Activation::IDENTITY;
  validateCommon(index);
  return input;
}

std::unique_ptr<layers::RuntimeLayer> DropoutLayer::instantiate() const {
  return std::make_unique<layers::IdentityLayer>();
}

}  // namespace dl4cpp
