#pragma once
#include "nn/conf/layers/ConvolutionLayer.h"

namespace dl4cpp {

// DL4J's Convolution1DLayer: a convolution along time over sequences (N, nIn, T) to
// (N, nOut, T'), computed as DL4J computes it, the 2-D convolution of (N, nIn, T, 1) with a
// (kernelSize, 1) window:
//   .layer(Convolution1DLayer::Builder(3).nOut(32).convolutionMode(ConvolutionMode::Same).build())
// Parameters as ConvolutionLayer's: b (nOut), W (nOut, nIn, kernelSize, 1). kernelSize defaults to
// 5, stride to 1, padding to 0, dilation to 1.
// Sequences of any length (InputType::recurrent(size)) need a window that keeps the length
// (ConvolutionMode::Same, stride 1): the network sizes a layer's output by its input's length.
// Other windows need the length declared (InputType::recurrent(size, length)). A features mask
// needs the length kept: padded steps output 0 and pass no gradient back.
class Convolution1DLayer : public ConvolutionLayer {
 public:
  class Builder;
  Convolution1DLayer() {
    kernel = {5, 1};
    stride = {1, 1};
    padding = {0, 0};
    dilation = {1, 1};
  }

  std::shared_ptr<Layer> clone() const override {
    return std::make_shared<Convolution1DLayer>(*this);
  }
  std::string typeName() const override { return "Convolution1DLayer"; }
  bool consumesImages() const override { return false; }
  bool consumesSequences() const override { return true; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;
};

class Convolution1DLayer::Builder : public LayerBuilder<Builder, Convolution1DLayer> {
 public:
  Builder() = default;
  explicit Builder(int64_t kernelSize) { this->kernelSize(kernelSize); }
  Builder(int64_t kernelSize, int64_t stride) { this->kernelSize(kernelSize).stride(stride); }
  Builder(int64_t kernelSize, int64_t stride, int64_t padding) {
    this->kernelSize(kernelSize).stride(stride).padding(padding);
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
  Builder& dilation(int64_t d) {
    return set([&] { conf_.dilation = {d, 1}; });
  }
  Builder& convolutionMode(ConvolutionMode m) {
    return set([&] { conf_.convolutionMode = m; });
  }
  Builder& nIn(int64_t n) {
    return set([&] { conf_.nIn = n; });
  }
  Builder& nOut(int64_t n) {
    return set([&] { conf_.nOut = n; });
  }
  Builder& hasBias(bool b) {
    return set([&] { conf_.hasBias = b; });
  }
};

}  // namespace dl4cpp
