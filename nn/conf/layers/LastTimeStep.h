#pragma once
#include "nn/conf/layers/BaseWrapperLayer.h"

namespace dl4cpp {

// DL4J's LastTimeStep: runs a recurrent layer and passes on its output at the last time step only,
// sequences (N, nIn, T) to rows (N, nOut), so feed-forward layers (DenseLayer, OutputLayer) may
// follow a recurrent stack:
//   .layer(LastTimeStep(LSTM::Builder().nOut(32).build()))
//   .layer(OutputLayer::Builder(LossFunction::MCXENT).nOut(5).activation(Activation::SOFTMAX)...)
// With a features mask, each example's last step is its last real one (the last 1 of its mask
// row); without one, step T - 1. The gradient reaches the wrapped layer at that step only.
// Parameters, state and common fields are the wrapped layer's (BaseWrapperLayer).
class LastTimeStep : public BaseWrapperLayer {
 public:
  LastTimeStep() = default;  // for the LayerRegistry; give it a layer before use
  explicit LastTimeStep(const Layer& underlying) : BaseWrapperLayer(underlying) {}

  std::shared_ptr<Layer> clone() const override { return std::make_shared<LastTimeStep>(*this); }
  std::string typeName() const override { return "LastTimeStep"; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;
};

}  // namespace dl4cpp
