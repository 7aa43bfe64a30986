#pragma once
#include "nn/conf/layers/Layer.h"
#include "nn/conf/layers/LossOutput.h"

namespace dl4cpp {

// A loss on the layer's input through its activation, without parameters (DL4J's LossLayer): a
// last layer of a MultiLayerNetwork (LossOutput), whose output has the size of its input. It reads
// rows (an image input is flattened). DL4J's builder sets the activation to IDENTITY rather than
// the network's default; the loss defaults to MCXENT, which needs SOFTMAX (or SIGMOID).
class LossLayer : public Layer, public LossOutput {
 public:
  class Builder;

  std::shared_ptr<Layer> clone() const override { return std::make_shared<LossLayer>(*this); }
  std::string typeName() const override { return "LossLayer"; }
  bool consumesImages() const override { return false; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
};

class LossLayer::Builder : public LayerBuilder<Builder, LossLayer> {
 public:
  Builder() { conf_.activation = Activation::IDENTITY; }
  explicit Builder(LossFunction loss) : Builder() { conf_.lossFunction = loss; }
  Builder& lossFunction(LossFunction loss) {
    return set([&] { conf_.lossFunction = loss; });
  }
};

}  // namespace dl4cpp
