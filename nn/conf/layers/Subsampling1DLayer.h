#pragma once
#include "nn/conf/layers/SubsamplingLayer.h"

namespace dl4cpp {

// DL4J's Subsampling1DLayer: MAX or AVG pooling along time over sequences (N, C, T) to
// (N, C, T'), computed as DL4J computes it, the 2-D pooling of (N, C, T, 1) with a
// (kernelSize, 1) window:
//   .layer(Subsampling1DLayer::Builder(PoolingType::MAX, 2, 2).build())     // kernel 2, stride 2
// kernelSize and stride default to 2, padding to 0. The length rules are Convolution1DLayer's:
// sequences of any length need ConvolutionMode::Same and stride 1, a features mask needs the
// length kept (padded steps output 0; a window over real and padded steps pools both).
class Subsampling1DLayer : public SubsamplingLayer {
 public:
  class Builder;
  Subsampling1DLayer() {
    kernel = {2, 1};
    stride = {2, 1};
    padding = {0, 0};
  }

  std::shared_ptr<Layer> clone() const override {
    return std::make_shared<Subsampling1DLayer>(*this);
  }
  std::string typeName() const override { return "Subsampling1DLayer"; }
  bool consumesImages() const override { return false; }
  bool consumesSequences() const override { return true; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;
};

class Subsampling1DLayer::Builder : public LayerBuilder<Builder, Subsampling1DLayer> {
 public:
  Builder() = default;
  explicit Builder(PoolingType type) { poolingType(type); }
  Builder(PoolingType type, int64_t kernelSize) { poolingType(type).kernelSize(kernelSize); }
  Builder(PoolingType type, int64_t kernelSize, int64_t stride) {
    poolingType(type).kernelSize(kernelSize).stride(stride);
  }
  Builder& poolingType(PoolingType t) {
    return set([&] { conf_.poolingType = t; });
  }
  Builder& kernelSize(int64_t k) {
    return set([&] { conf_.kernel = {k, 1}; });
  }
  Builder& stride(int64_t s) {
    return set([&] { conf_.stride = {s, 1}; });
  }
  Builder& padding(int64_t p) {
    return set([&] { conf_.padding = {p, 0}; });
  }
  Builder& convolutionMode(ConvolutionMode m) {
    return set([&] { conf_.convolutionMode = m; });
  }
};

}  // namespace dl4cpp
