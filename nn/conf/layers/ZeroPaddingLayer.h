#pragma once
#include <array>

#include "nn/conf/layers/Layer.h"

namespace dl4cpp {

// Zeros around each image (DL4J's ZeroPaddingLayer): (N, C, H, W) ->
// (N, C, H + top + bottom, W + left + right). DL4J's builders: Builder(pad) on every side,
// Builder(padHeight, padWidth), Builder(top, bottom, left, right). No parameters.
class ZeroPaddingLayer : public Layer {
 public:
  class Builder;

  // top, bottom, left, right (DL4J's order)
  std::array<int64_t, 4> padding{0, 0, 0, 0};

  std::shared_ptr<Layer> clone() const override {
    return std::make_shared<ZeroPaddingLayer>(*this);
  }
  std::string typeName() const override { return "ZeroPaddingLayer"; }
  bool consumesImages() const override { return true; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
};

class ZeroPaddingLayer::Builder : public LayerBuilder<Builder, ZeroPaddingLayer> {
 public:
  explicit Builder(int64_t pad) : Builder(pad, pad, pad, pad) {}
  Builder(int64_t padHeight, int64_t padWidth)
      : Builder(padHeight, padHeight, padWidth, padWidth) {}
  Builder(int64_t top, int64_t bottom, int64_t left, int64_t right) {
    conf_.padding = {top, bottom, left, right};
  }
};

}  // namespace dl4cpp
