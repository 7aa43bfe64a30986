#pragma once
#include "nn/conf/layers/Layer.h"

namespace dl4cpp {

// DL4J's DropoutLayer: inverted dropout with retain probability dropOut, and nothing else (output =
// input in inference). Takes rows or images; no parameters, no activation.
class DropoutLayer : public Layer {
 public:
  class Builder;

  DropoutLayer() = default;
  explicit DropoutLayer(double retainProbability) { dropOut = retainProbability; }

  std::shared_ptr<Layer> clone() const override { return std::make_shared<DropoutLayer>(*this); }
  std::string typeName() const override { return "DropoutLayer"; }
  bool consumesImages() const override { return false; }
  bool acceptsRowsOrImages() const override { return true; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;
};

class DropoutLayer::Builder : public LayerBuilder<Builder, DropoutLayer> {
 public:
  Builder() = default;
  explicit Builder(double retainProbability) { dropOut(retainProbability); }
};

}  // namespace dl4cpp
