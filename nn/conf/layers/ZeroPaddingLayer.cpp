#include "nn/conf/layers/ZeroPaddingLayer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "nn/conf/ConfigurationLimits.h"
#include "nn/layers/RuntimeLayer.h"

namespace dl4cpp {

namespace {

// The runtime object. No parameters.
class ZeroPaddingRuntime : public layers::RuntimeLayer {
 public:
  explicit ZeroPaddingRuntime(const ZeroPaddingLayer& conf)
      : padding_{conf.padding[0], conf.padding[1], conf.padding[2], conf.padding[3]} {}

  Shape outputShape(const Shape& input) const override {
    return {input[0], input[1], input[2] + padding_.top + padding_.bottom,
            input[3] + padding_.left + padding_.right};
  }
  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext&) override {
    ctx.backend().zeroPaddingForward(input, output, padding_);
  }
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override {
    ctx.backend().zeroPaddingBackward(grad, inputGrad, padding_);
  }

 private:
  Padding2d padding_;
};

}  // namespace

InputType ZeroPaddingLayer::resolve(int index, const InputType& input,
                                    const LayerDefaults& defaults) {
  inheritDefaults(defaults);
  if (input.kind == InputType::Kind::FeedForward)
    throw ConfigError(where(index) + ": needs image input but receives " + input.toString());
  for (int64_t p : padding)
    if (p < 0 || p > limits::kMaxExtent)
      throw ConfigError(
          fmt::format("{}: padding [top, bottom, left, right] must be between 0 and "
                      "{}, got {}",
                      where(index), limits::kMaxExtent, padding));
  validateCommon(index);
  // Each term is at most 2^20: no overflow; NeuralNetConfiguration checks the result's limits.
  return InputType::convolutional(input.height + padding[0] + padding[1],
                                  input.width + padding[2] + padding[3], input.channels);
}

std::unique_ptr<layers::RuntimeLayer> ZeroPaddingLayer::instantiate() const {
  return std::make_unique<ZeroPaddingRuntime>(*this);
}

void ZeroPaddingLayer::writeFields(LayerFieldWriter& out) const {
  out.integers("padding", padding);
}

void ZeroPaddingLayer::readFields(const LayerFieldReader& in) {
  const auto values = in.sizes("padding", 4, limits::kMaxExtent);
  std::copy(values.begin(), values.end(), padding.begin());
}

}  // namespace dl4cpp