#pragma once
#include "nn/conf/layers/Layer.h"

namespace dl4cpp {

// Fully connected layer: y = activation(x W^T + b); W: (nOut, nIn), b: (nOut).
class DenseLayer : public FeedForwardLayer {
 public:
  class Builder;

  std::shared_ptr<Layer> clone() const override { return std::make_shared<DenseLayer>(*this); }
  std::string typeName() const override { return "DenseLayer"; }
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;
};

class DenseLayer::Builder : public FeedForwardLayerBuilder<Builder, DenseLayer> {};

}  // namespace dl4cpp
