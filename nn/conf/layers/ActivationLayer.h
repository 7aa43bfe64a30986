#pragma once
#include "nn/conf/layers/Layer.h"

namespace dl4cpp {

// A layer that only applies its activation (DL4J's ActivationLayer), element-wise (SOFTMAX over
// dimension 1): y = activation(x). It takes rows, images (flattened images as images) or sequences
// (SOFTMAX over each step's features; a padded step gets f(0)) and outputs the same type; no
// parameters. The activation defaults to the network's, as on every
// layer:
//   ActivationLayer::Builder().activation(Activation::ELU).build()
class ActivationLayer : public Layer {
 public:
  class Builder;

  std::shared_ptr<Layer> clone() const override { return std::make_shared<ActivationLayer>(*this); }
  std::string typeName() const override { return "ActivationLayer"; }
  bool consumesImages() const override { return false; }
  bool acceptsRowsOrImages() const override { return true; }
  bool acceptsSequences() const override { return true; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;
};

class ActivationLayer::Builder : public LayerBuilder<Builder, ActivationLayer> {
 public:
  Builder() = default;
  explicit Builder(Activation a) { activation(a); }
};

}  // namespace dl4cpp
