#pragma once
#include "nn/conf/layers/BaseWrapperLayer.h"

namespace dl4cpp {

// DL4J's MaskZeroLayer: runs a recurrent layer with a features mask made from its input, 0 at every
// step whose features all equal maskingValue (default 0) and 1 elsewhere, so zero-padded sequences
// need no mask of their own:
//   .layer(MaskZeroLayer(LSTM::Builder().nOut(16).build()))          // maskingValue 0
//   .layer(MaskZeroLayer::Builder().setUnderlying(lstm).setMaskValue(-1).build())
// As in DL4J, the mask it makes replaces the batch's features mask for the wrapped layer; the
// layers after it see the batch's. Its output is the wrapped layer's (0 at the masked steps).
// Parameters, state and common fields are the wrapped layer's (BaseWrapperLayer).
class MaskZeroLayer : public BaseWrapperLayer {
 public:
  class Builder;

  MaskZeroLayer() = default;  // for the LayerRegistry; give it a layer before use
  explicit MaskZeroLayer(const Layer& underlying, double maskingValue = 0.0)
      : BaseWrapperLayer(underlying), maskingValue(maskingValue) {}

  double maskingValue = 0.0;

  std::shared_ptr<Layer> clone() const override { return std::make_shared<MaskZeroLayer>(*this); }
  std::string typeName() const override { return "MaskZeroLayer"; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
};

// DL4J's MaskZeroLayer.Builder.
class MaskZeroLayer::Builder {
 public:
  Builder& setUnderlying(const Layer& layer) {
    conf_.setUnderlying(layer);
    return *this;
  }
  Builder& setMaskValue(double value) {
    conf_.maskingValue = value;
    return *this;
  }
  MaskZeroLayer build() const { return conf_; }

 private:
  MaskZeroLayer conf_;
};

}  // namespace dl4cpp
