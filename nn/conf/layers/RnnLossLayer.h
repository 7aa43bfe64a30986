#pragma once
#include "nn/conf/layers/Layer.h"
#include "nn/conf/layers/LossOutput.h"

namespace dl4cpp {

// DL4J's RnnLossLayer: a loss at every time step of sequences (N, C, T) through the layer's
// activation, without parameters; labels are (N, C, T), and the output has the input's shape.
// The activation applies to each step's C values (SOFTMAX over the features of a step). With a
// labels mask only the real steps count: the loss is the sum over them (averaged over the
// examples by the network, as DL4J's score), padded steps get no gradient, and evaluation skips
// them. As DL4J's builder, the activation defaults to IDENTITY (not the network's default) and the
// loss to MCXENT, which needs SOFTMAX (or SIGMOID). The activation must be one whose derivative
// follows from its output (not GELU, SWISH or SOFTPLUS); the loss and activation pairs are
// OutputLayer's.
class RnnLossLayer : public Layer, public LossOutput {
 public:
  class Builder;

  std::shared_ptr<Layer> clone() const override { return std::make_shared<RnnLossLayer>(*this); }
  std::string typeName() const override { return "RnnLossLayer"; }
  bool consumesImages() const override { return false; }
  bool consumesSequences() const override { return true; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
};

class RnnLossLayer::Builder : public LayerBuilder<Builder, RnnLossLayer> {
 public:
  Builder() { conf_.activation = Activation::IDENTITY; }
  explicit Builder(LossFunction loss) : Builder() { conf_.lossFunction = loss; }
  Builder& lossFunction(LossFunction loss) {
    return set([&] { conf_.lossFunction = loss; });
  }
};

}  // namespace dl4cpp
