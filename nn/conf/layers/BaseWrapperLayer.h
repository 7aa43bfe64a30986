#pragma once
// What DL4J's wrapper layers share (its BaseWrapperLayer): a layer that runs another, the
// underlying layer, inside it. The wrapper's parameters and state are the underlying layer's
// (same names and layout, so DL4J's values load as they are), and its common fields (updater,
// l2, dropOut, ...) are the underlying layer's once resolved: set them on the layer you wrap. The
// underlying layer must be a recurrent layer (LSTM, SimpleRnn, or another wrapper delivering
// sequences); anything else is a ConfigError when the configuration is built. In JSON the
// underlying layer is a complete layer object in the field "underlying".
#include <memory>

#include "nn/conf/layers/Layer.h"

namespace dl4cpp {

class BaseWrapperLayer : public Layer {
 public:
  BaseWrapperLayer() = default;
  explicit BaseWrapperLayer(const Layer& underlying) : underlying_(underlying.clone()) {}
  BaseWrapperLayer(const BaseWrapperLayer& other)
      : Layer(other), underlying_(other.underlying_ ? other.underlying_->clone() : nullptr) {}
  BaseWrapperLayer& operator=(const BaseWrapperLayer& other);

  // The wrapped layer's configuration (null only in a default-constructed wrapper).
  const std::shared_ptr<Layer>& underlying() const { return underlying_; }
  void setUnderlying(const Layer& layer) { underlying_ = layer.clone(); }

  bool consumesImages() const override { return false; }
  bool consumesSequences() const override { return true; }
  std::vector<ParamSpec> paramSpecs() const override;
  std::vector<StateSpec> stateSpecs() const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
  std::optional<SizeFields> nInOut() override;
  void clearInferredSizes() override;

 protected:
  // Resolves the underlying layer against `input` (ConfigError unless it is a recurrent layer
  // delivering sequences), takes its resolved common fields, and returns its output type.
  InputType resolveUnderlying(int index, const InputType& input, const LayerDefaults& defaults);

  std::shared_ptr<Layer> underlying_;
};

// Copies `from`'s common fields (updater, regularisation, dropOut, ...) into `to`, keeping `to`'s
// name and frozen flag: a wrapper's fields are those of the layer it runs.
void adoptCommonFields(Layer& to, const Layer& from);

// ConfigError unless `layer`, resolved as layer `index` and delivering `out`, is one a recurrent
// wrapper runs: a layer that takes and delivers sequences and ends no network.
void checkWrappable(const std::string& where, const Layer* layer, const InputType& out);

}  // namespace dl4cpp
