#pragma once
#include "nn/backend/OpTypes.h"
#include "nn/conf/layers/Layer.h"

namespace dl4cpp {

// 2-D convolution: y = activation(conv(x, W) + b); W: (nOut, nIn, kH, kW), b: (nOut).
// Input (N, nIn, H, W); output size per ConvolutionMode (see Enums.h).
class ConvolutionLayer : public Layer {
 public:
  class Builder;

  struct Pair {
    int64_t h = 0, w = 0;
  };
  Pair kernel{5, 5};
  Pair stride{1, 1};
  Pair padding{0, 0};
  Pair dilation{1, 1};
  std::optional<ConvolutionMode> convolutionMode;
  int64_t nIn = 0;  // 0: inferred (input channels)
  int64_t nOut = 0;
  bool hasBias = true;

  // Resolved by resolve(): the concrete window including Same-mode padding.
  WindowGeometry geometry;

  std::shared_ptr<Layer> clone() const override {
    return std::make_shared<ConvolutionLayer>(*this);
  }
  std::string typeName() const override { return "ConvolutionLayer"; }
  bool consumesImages() const override { return true; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override;
  // b (nOut), then W (nOut, nIn, kH, kW) with DL4J's convolution fans: DL4J's order.
  std::vector<ParamSpec> paramSpecs() const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
  std::optional<SizeFields> nInOut() override { return SizeFields{&nIn, &nOut}; }
  void clearInferredSizes() override { nIn = 0; }
  void setConvolutionMode(ConvolutionMode mode) override { convolutionMode = mode; }
};

class ConvolutionLayer::Builder : public LayerBuilder<Builder, ConvolutionLayer> {
 public:
  Builder() = default;
  Builder(int64_t kH, int64_t kW) { kernelSize(kH, kW); }
  Builder(int64_t kH, int64_t kW, int64_t sH, int64_t sW) { kernelSize(kH, kW).stride(sH, sW); }
  Builder(int64_t kH, int64_t kW, int64_t sH, int64_t sW, int64_t pH, int64_t pW) {
    kernelSize(kH, kW).stride(sH, sW).padding(pH, pW);
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
  Builder& dilation(int64_t h, int64_t w) {
    return set([&] { conf_.dilation = {h, w}; });
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

// Resolves a window for `mode` over an input of inH x inW: validates and fills `g` (padding for
// Same); returns false with `why` set when the configuration is invalid. Shared by convolution
// and subsampling.
bool resolveWindow(ConvolutionMode mode, int64_t inH, int64_t inW, WindowGeometry& g,
                   std::string& why);

// A window's (height, width) pair as JSON writes it: [h, w]. Shared with subsampling.
void writePair(LayerFieldWriter& out, std::string_view key, const ConvolutionLayer::Pair& p);
ConvolutionLayer::Pair readPair(const LayerFieldReader& in, std::string_view key);

}  // namespace dl4cpp
