#pragma once
#include "nn/conf/layers/Layer.h"

namespace dl4cpp {

// DL4J's EmbeddingSequenceLayer: a lookup table applied at every step of index sequences. Input
// (N, 1, T) (InputType::recurrent(1)) or (N, T) (InputType::feedForward(T), fixed length, no
// masks) of indices in [0, nIn); output (N, nOut, T), InputType::recurrent(nOut, T), with
// y[e, :, t] = activation(W[x[e, t], :] + b). W (nIn, nOut), b (nOut) when hasBias (DL4J's
// default: no bias).
//
// inputLength (DL4J's default 1) is the length of every sequence when inferInputLength is false;
// with inferInputLength (DL4J's default true) the length is taken from the input type (or from
// each batch when the input type's length is 0). A batch of another length is a ShapeError.
// The features mask is honoured and passed on as it is: a padded step is not looked up (its output
// is 0 and any value there is accepted). An index outside [0, nIn), or not an integer, at a real
// step is a DataError naming the layer, the index and the vocabulary size. No gradient flows to
// the input (its gradient is 0). Runs on the host.
class EmbeddingSequenceLayer : public FeedForwardLayer {
 public:
  class Builder;
  EmbeddingSequenceLayer() { hasBias = false; }

  int64_t inputLength = 1;
  bool inferInputLength = true;

  std::shared_ptr<Layer> clone() const override {
    return std::make_shared<EmbeddingSequenceLayer>(*this);
  }
  std::string typeName() const override { return "EmbeddingSequenceLayer"; }
  bool acceptsSequences() const override { return true; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  // W (nIn, nOut) with fans nIn and nOut (DL4J's layout), then b (nOut).
  std::vector<ParamSpec> paramSpecs() const override;
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
  void clearInferredSizes() override {}  // nIn is the vocabulary, never inferred

 private:
  std::string where_;  // for the runtime's errors; set by resolve()
  int64_t steps_ = 0;  // the resolved length of every sequence, 0 for any
};

class EmbeddingSequenceLayer::Builder
    : public FeedForwardLayerBuilder<Builder, EmbeddingSequenceLayer> {
 public:
  Builder& inputLength(int64_t n) {
    return set([&] { conf_.inputLength = n; });
  }
  Builder& inferInputLength(bool infer) {
    return set([&] { conf_.inferInputLength = infer; });
  }
};

}  // namespace dl4cpp
