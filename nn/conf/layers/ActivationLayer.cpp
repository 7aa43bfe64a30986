#include <dl4cpp/nn/conf/layers/ActivationLayer.h>
#include <dl4cpp/nn/layers/ActivationLayer.h>

namespace dl4cpp {

InputType ActivationLayer::resolve(int index, const InputType& input,
                                   const LayerDefaults& defaults) {
  inheritDefaults(defaults);
  validateCommon(index);
  return input;
}

std::unique_ptr<layers::RuntimeLayer> ActivationLayer::instantiate() const {
  return std::make_unique<layers::ActivationLayer>(*this);
}

}  // namespace dl4cpp
