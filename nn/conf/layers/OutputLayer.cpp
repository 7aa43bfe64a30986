#include "nn/conf/layers/OutputLayer.h"

#include "nn/conf/layers/DenseRuntime.h"
#include "nn/layers/LossOutputRuntime.h"

namespace dl4cpp {

namespace {

// A dense layer whose output gradient comes from the loss.
class OutputRuntime : public detail::DenseRuntime, public layers::LossOutputRuntime {
 public:
  explicit OutputRuntime(const OutputLayer& conf)
      : DenseRuntime(conf), LossOutputRuntime(conf.lossFunction) {}
  layers::LossOutputRuntime* asLossOutput() override { return this; }

 protected:
  const layers::LayerActivation& lossActivation() const override { return activation_; }
};

}  // namespace

InputType OutputLayer::resolve(int index, const InputType& input, const LayerDefaults& defaults) {
  const InputType out = FeedForwardLayer::resolve(index, input, defaults);
  validateLoss(where(index), *activation);
  return out;
}

std::unique_ptr<layers::RuntimeLayer> OutputLayer::instantiate() const {
  return std::make_unique<OutputRuntime>(*this);
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
