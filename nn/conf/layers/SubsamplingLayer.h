#pragma once
#include "nn/backend/OpTypes.h"
#include "nn/conf/layers/ConvolutionLayer.h"

namespace dl4cpp {

// 2-D pooling (MAX or AVG; AVG excludes padding from the divisor, DL4J's default). DL4J's SUM and
// PNORM are refused here (resolve()); GlobalPoolingLayer has them.
// No parameters; channels pass through.
class SubsamplingLayer : public Layer {
 public:
  class Builder;

  PoolingType poolingType = PoolingType::MAX;
  ConvolutionLayer::Pair kernel{2, 2};
  ConvolutionLayer::Pair stride{2, 2};
  ConvolutionLayer::Pair padding{0, 0};
  std::optional<ConvolutionMode> convolutionMode;

  WindowGeometry geometry;  // resolved

  std::shared_ptr<Layer> clone() const override {
    return std::make_shared<SubsamplingLayer>(*this);
  }
  std::string typeName() const override { return "SubsamplingLayer"; }
  bool consumesImages() const override { return true; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
  void setConvolutionMode(ConvolutionMode mode) override { convolutionMode = mode; }
};

class SubsamplingLayer::Builder : public LayerBuilder<Builder, SubsamplingLayer> {
 public:
  Builder() = default;
  explicit Builder(PoolingType type) { poolingType(type); }
  Builder(PoolingType type, int64_t kH, int64_t kW) { poolingType(type).kernelSize(kH, kW); }
  Builder(PoolingType type, int64_t kH, int64_t kW, int64_t sH, int64_t sW) {
    poolingType(type).kernelSize(kH, kW).stride(sH, sW);
  }
  Builder& poolingType(PoolingType t) {
    return set([&] { conf_.poolingType = t; });
  }
  Builder& kernelSize(int64_t h, int64_t w) {
    return set([&] { conf_.kernel = {h, w}; });
  }
  Builder& stride(int64_t h, int64_t w) {
    return set([&] { conf_.stride = {h, w}; });
  }
  Builder& padding(int64_t h, int64_t w) {
    return set([&] { conf_.padding = {h, w}; });
  }
  Builder& convolutionMode(ConvolutionMode m) {
    return set([&] { conf_.convolutionMode = m; });
  }
};

}  // namespace dl4cpp
