#pragma once
#include <dl4cpp/nn/conf/layers/Layer.h>
#include <dl4cpp/nn/conf/layers/LossOutput.h>

namespace dl4cpp {

// A dense layer followed by a loss: a last layer of a MultiLayerNetwork (LossOutput). Supported
// pairs (as DL4J recommends): NEGATIVELOGLIKELIHOOD or MCXENT with SOFTMAX, MSE with IDENTITY (or
// any activation), XENT with SIGMOID. A cross-entropy loss with an activation whose output is not
// a probability is rejected at build time.
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
