#pragma once
#include <memory>

#include "nn/conf/layers/Layer.h"

namespace dl4cpp {

// DL4J's Bidirectional: two copies of a recurrent layer, one over the sequences as they are and one
// over the sequences reversed in time, their outputs combined at each step by `mode`:
//   .layer(Bidirectional(Bidirectional::Mode::CONCAT, LSTM::Builder().nOut(16).build()))
// CONCAT (the default) stacks the two outputs along the features, (N, 2 nOut, T); ADD, MUL and
// AVERAGE combine them element-wise, (N, nOut, T). The backward copy's output is reversed back, so
// step t of both is about input step t. With a features mask each sequence is reversed within its
// real steps (from its first to its last real step; DL4J's reverse with a mask), so padding stays
// padding and the backward copy starts at each sequence's last real step.
// Parameters: the forward copy's, then the backward copy's, each in the wrapped layer's layout and
// named with DL4J's prefixes "f" and "b" (fW, fRW, fb, bW, bRW, bb for an LSTM); the two are drawn
// independently. The common fields (updater, l2, ...) are the wrapped layer's: set them there. The
// wrapped layer must be a recurrent layer (ConfigError otherwise). In JSON the two copies are the
// fields "fwd" and "bwd", and the mode "mode".
class Bidirectional : public Layer {
 public:
  enum class Mode { CONCAT, ADD, MUL, AVERAGE };
  class Builder;

  Bidirectional() = default;  // for the LayerRegistry; give it a layer before use
  explicit Bidirectional(const Layer& layer) : Bidirectional(Mode::CONCAT, layer) {}
  Bidirectional(Mode mode, const Layer& layer)
      : mode(mode), fwd_(layer.clone()), bwd_(layer.clone()) {}
  Bidirectional(const Bidirectional& other);
  Bidirectional& operator=(const Bidirectional& other);

  Mode mode = Mode::CONCAT;

  // The forward and the backward copy (null only in a default-constructed layer).
  const std::shared_ptr<Layer>& forwardLayer() const { return fwd_; }
  const std::shared_ptr<Layer>& backwardLayer() const { return bwd_; }

  std::shared_ptr<Layer> clone() const override { return std::make_shared<Bidirectional>(*this); }
  std::string typeName() const override { return "Bidirectional"; }
  bool consumesImages() const override { return false; }
  bool consumesSequences() const override { return true; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;
  std::vector<ParamSpec> paramSpecs() const override;
  std::vector<StateSpec> stateSpecs() const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
  void clearInferredSizes() override;

 private:
  std::shared_ptr<Layer> fwd_, bwd_;
};

inline constexpr EnumNames<Bidirectional::Mode, 4> kBidirectionalModeNames{
    {{Bidirectional::Mode::CONCAT, "CONCAT"},
     {Bidirectional::Mode::ADD, "ADD"},
     {Bidirectional::Mode::MUL, "MUL"},
     {Bidirectional::Mode::AVERAGE, "AVERAGE"}}};

// DL4J's Bidirectional.Builder: Bidirectional::Builder().rnnLayer(lstm).mode(Mode::ADD).build().
class Bidirectional::Builder {
 public:
  Builder& rnnLayer(const Layer& layer) {
    layer_ = layer.clone();
    return *this;
  }
  Builder& mode(Mode m) {
    mode_ = m;
    return *this;
  }
  // ConfigError without an rnnLayer.
  Bidirectional build() const;

 private:
  std::shared_ptr<Layer> layer_;
  Mode mode_ = Mode::CONCAT;
};

}  // namespace dl4cpp
