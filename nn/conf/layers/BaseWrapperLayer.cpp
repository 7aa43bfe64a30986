#include "nn/conf/layers/BaseWrapperLayer.h"

#include "nn/conf/NestedLayerFields.h"
#include "nn/conf/layers/LossOutput.h"
#include "nn/core/Error.h"

namespace dl4cpp {

void adoptCommonFields(Layer& to, const Layer& from) {
  const std::string name = to.name;
  const bool frozen = to.frozen;
  to.Layer::operator=(from);
  to.name = name;
  to.frozen = frozen;
}

void checkWrappable(const std::string& where, const Layer* layer, const InputType& out) {
  if (layer == nullptr) throw ConfigError(where + ": no underlying layer to wrap");
  if (!layer->consumesSequences() || out.kind != InputType::Kind::Recurrent ||
      dynamic_cast<const LossOutput*>(layer) != nullptr)
    throw ConfigError(where + " wraps a recurrent layer (LSTM, SimpleRnn, ...), not " +
                      layer->typeName());
}

BaseWrapperLayer& BaseWrapperLayer::operator=(const BaseWrapperLayer& other) {
  if (this == &other) return *this;
  Layer::operator=(other);
  underlying_ = other.underlying_ ? other.underlying_->clone() : nullptr;
  return *this;
}

InputType BaseWrapperLayer::resolveUnderlying(int index, const InputType& input,
                                              const LayerDefaults& defaults) {
  if (!underlying_) throw ConfigError(where(index) + ": no underlying layer to wrap");
  if (!underlying_->consumesSequences())
    throw ConfigError(where(index) + " wraps a recurrent layer (LSTM, SimpleRnn, ...), not " +
                      underlying_->typeName());
  if (input.kind != InputType::Kind::Recurrent)
    throw ConfigError(where(index) + " needs sequences but receives " + input.toString() +
                      "; set the input type with InputType::recurrent(size)");
  const InputType out = underlying_->resolve(index, input, defaults);
  checkWrappable(where(index), underlying_.get(), out);
  adoptCommonFields(*this, *underlying_);
  return out;
}

std::vector<ParamSpec> BaseWrapperLayer::paramSpecs() const {
  return underlying_ ? underlying_->paramSpecs() : std::vector<ParamSpec>{};
}

std::vector<StateSpec> BaseWrapperLayer::stateSpecs() const {
  return underlying_ ? underlying_->stateSpecs() : std::vector<StateSpec>{};
}

void BaseWrapperLayer::writeFields(LayerFieldWriter& out) const {
  if (!underlying_) throw ConfigError(typeName() + ": no underlying layer to write");
  writeNestedLayer(out, "underlying", *underlying_);
}

void BaseWrapperLayer::readFields(const LayerFieldReader& in) {
  underlying_ = readNestedLayer(in, "underlying");
}

std::optional<Layer::SizeFields> BaseWrapperLayer::nInOut() {
  return underlying_ ? underlying_->nInOut() : std::nullopt;
}

void BaseWrapperLayer::clearInferredSizes() {
  if (underlying_) underlying_->clearInferredSizes();
}

}  // namespace dl4cpp
