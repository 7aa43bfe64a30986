#include <dl4cpp/nn/conf/layers/OutputLayer.h>
#include <dl4cpp/nn/layers/OutputLayer.h>

namespace dl4cpp {

InputType OutputLayer::resolve(int index, const InputType& input, const LayerDefaults& defaults) {
  const InputType out = FeedForwardLayer::resolve(index, input, defaults);
  validateLoss(where(index), *activation);
  return out;
}

std::unique_ptr<layers::RuntimeLayer> OutputLayer::instantiate() const {
  return std::make_unique<layers::OutputLayer>(*this);
}

void OutputLayer::writeFields(LayerFieldWriter& out) const {
  FeedForwardLayer::writeFields(out);
  writeLoss(out);
}

void OutputLayer::readFields(const LayerFieldReader& in) {
  FeedForwardLayer::readFields(in);
  readLoss(in);
}

}  // namespace dl4cpp
