#pragma once
#include "nn/conf/layers/Layer.h"
#include "nn/conf/layers/LossOutput.h"

namespace dl4cpp {

// A dense layer followed by a loss: a last layer of a MultiLayerNetwork (LossOutput). Supported
// pairs (as DL4J recommends): NEGATIVELOGLIKELIHOOD, MCXENT or KL_DIVERGENCE with SOFTMAX, XENT
// with SIGMOID, the regression losses (MSE, MEAN_ABSOLUTE_ERROR, L1, L2) and the hinges (HINGE,
// SQUARED_HINGE, labels -1 or +1) with IDENTITY or any activation. A loss that takes the logarithm
// of the output with an activation whose output is not a probability is rejected at build time.
class OutputLayer : public FeedForwardLayer, public LossOutput {
 public:
  class Builder;

  std::shared_ptr<Layer> clone() const override { return std::make_shared<OutputLayer>(*this); }
  std::string typeName() const override { return "OutputLayer"; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
};

class OutputLayer::Builder : public FeedForwardLayerBuilder<Builder, OutputLayer> {
 public:
  Builder() = default;
  explicit Builder(LossFunction loss) { conf_.lossFunction = loss; }
  Builder& lossFunction(LossFunction loss) {
    return set([&] { conf_.lossFunction = loss; });
  }
};

}  // namespace dl4cpp
