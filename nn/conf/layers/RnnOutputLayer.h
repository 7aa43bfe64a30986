#pragma once
#include "nn/conf/layers/Layer.h"
#include "nn/conf/layers/LossOutput.h"

namespace dl4cpp {

// DL4J's RnnOutputLayer: a dense layer and a loss applied at every time step of sequences
// (N, nIn, T), giving (N, nOut, T); labels are (N, nOut, T). W (nOut, nIn) and b (nOut) as in
// OutputLayer, shared by every step. With a labels mask only the real steps count: the loss is the
// sum over them (averaged over the examples by the network, as DL4J's score), padded steps get no
// gradient, and evaluation skips them. The activation must be one whose derivative follows from
// its output (not GELU, SWISH or SOFTPLUS); the loss and activation pairs are OutputLayer's.
class RnnOutputLayer : public FeedForwardLayer, public LossOutput {
 public:
  class Builder;

  bool consumesSequences() const override { return true; }
  std::shared_ptr<Layer> clone() const override { return std::make_shared<RnnOutputLayer>(*this); }
  std::string typeName() const override { return "RnnOutputLayer"; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
};

class RnnOutputLayer::Builder : public FeedForwardLayerBuilder<Builder, RnnOutputLayer> {
 public:
  Builder() = default;
  explicit Builder(LossFunction loss) { conf_.lossFunction = loss; }
  Builder& lossFunction(LossFunction loss) {
    return set([&] { conf_.lossFunction = loss; });
  }
};

}  // namespace dl4cpp
