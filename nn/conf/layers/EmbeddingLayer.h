#pragma once
#include "nn/conf/layers/Layer.h"

namespace dl4cpp {

// DL4J's EmbeddingLayer: a lookup table. Input (N, 1) class indices in [0, nIn) (as floats,
// InputType::feedForward(1)); output (N, nOut), row i of the output activation(W[x_i, :] + b).
// W (nIn, nOut), b (nOut) when hasBias (DL4J's default: no bias). nIn, the vocabulary size, is
// required (it is not the input's size). An index outside [0, nIn), or not an integer, is a
// DataError naming the layer, the index and the vocabulary size. No gradient flows to the input
// (its gradient is 0). Runs on the host.
class EmbeddingLayer : public FeedForwardLayer {
 public:
  class Builder;
  EmbeddingLayer() { hasBias = false; }

  std::shared_ptr<Layer> clone() const override { return std::make_shared<EmbeddingLayer>(*this); }
  std::string typeName() const override { return "EmbeddingLayer"; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  // W (nIn, nOut) with fans nIn and nOut (DL4J's layout), then b (nOut).
  std::vector<ParamSpec> paramSpecs() const override;
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;
  void clearInferredSizes() override {}  // nIn is the vocabulary, never inferred

 private:
  std::string where_;  // "layer 0 (EmbeddingLayer)", for the runtime's errors; set by resolve()
};

class EmbeddingLayer::Builder : public FeedForwardLayerBuilder<Builder, EmbeddingLayer> {};

}  // namespace dl4cpp
