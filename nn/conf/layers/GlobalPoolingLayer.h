#pragma once
#include "nn/conf/layers/Layer.h"

namespace dl4cpp {

// Pooling over each image's whole height and width, or over each sequence's time steps (DL4J's
// GlobalPoolingLayer): images (N, C, H, W) -> (N, C), or (N, C, 1, 1) with
// collapseDimensions(false); sequences (N, C, T) -> (N, C), or (N, C, 1) (InputType::recurrent(C,
// 1)). MAX, AVG, SUM or PNORM ((sum |x|^pnorm)^(1/pnorm), pnorm >= 1, DL4J's default 2). No
// parameters; no activation is applied. DL4J's poolingDimensions is not offered: images pool over
// height and width, sequences over time, its defaults.
//
// Sequences honour the features mask as DL4J's MaskedReductionUtil: only the real steps are
// pooled (AVG divides by their number) and only they receive gradient. A sequence without a real
// step pools to 0.
class GlobalPoolingLayer : public Layer {
 public:
  class Builder;

  PoolingType poolingType = PoolingType::MAX;
  int64_t pnorm = 2;
  bool collapseDimensions = true;

  std::shared_ptr<Layer> clone() const override {
    return std::make_shared<GlobalPoolingLayer>(*this);
  }
  std::string typeName() const override { return "GlobalPoolingLayer"; }
  bool consumesImages() const override { return true; }
  bool acceptsSequences() const override { return true; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
};

class GlobalPoolingLayer::Builder : public LayerBuilder<Builder, GlobalPoolingLayer> {
 public:
  Builder() = default;
  explicit Builder(PoolingType type) { poolingType(type); }
  Builder& poolingType(PoolingType t) {
    return set([&] { conf_.poolingType = t; });
  }
  Builder& pnorm(int64_t p) {
    return set([&] { conf_.pnorm = p; });
  }
  Builder& collapseDimensions(bool collapse) {
    return set([&] { conf_.collapseDimensions = collapse; });
  }
};

}  // namespace dl4cpp
