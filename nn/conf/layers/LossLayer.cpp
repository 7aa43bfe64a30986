#include <dl4cpp/nn/conf/layers/LossLayer.h>
#include <dl4cpp/nn/layers/LossLayer.h>

namespace dl4cpp {

InputType LossLayer::resolve(int index, const InputType& input, const LayerDefaults& defaults) {
  inheritDefaults(defaults);
  validateCommon(index);
  validateLoss(where(index), *activation);
  return InputType::feedForward(input.flatSize());
}

std::unique_ptr<layers::RuntimeLayer> LossLayer::instantiate() const {
  return std::make_unique<layers::LossLayer>(*this);
}

void LossLayer::writeFields(LayerFieldWriter& out) const { writeLoss(out); }

void LossLayer::readFields(const LayerFieldReader& in) { readLoss(in); }

}  // namespace dl4cpp
