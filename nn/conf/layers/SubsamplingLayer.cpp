#include "nn/conf/layers/SubsamplingLayer.h"

#include "nn/layers/RuntimeLayer.h"

namespace dl4cpp {

namespace {

// The runtime object. No parameters.
class SubsamplingRuntime : public layers::RuntimeLayer {
 public:
  explicit SubsamplingRuntime(const SubsamplingLayer& conf)
      : kind_(conf.poolingType), geometry_(conf.geometry) {}

  Shape outputShape(const Shape& input) const override {
    return {input[0], input[1], geometry_.outH(input[2]), geometry_.outW(input[3])};
  }
  LayerDescription describe() const override {
    LayerDescription d;
    d.kind = LayerDescription::Kind::POOLING;
    d.geometry = geometry_;
    d.pooling = kind_;
    return d;
  }
  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override {
    ctx.backend().poolingForward(kind_, input, output, geometry_, fwd.training, workspace_);
  }
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override {
    ctx.backend().poolingBackward(kind_, grad, inputGrad, geometry_, workspace_);
  }

 private:
  PoolingType kind_;
  WindowGeometry geometry_;
  Tensor workspace_;  // MAX: arg-max of the last training forward, read by backwardInput
};

}  // namespace

InputType SubsamplingLayer::resolve(int index, const InputType& input,
                                    const LayerDefaults& defaults) {
  inheritDefaults(defaults);
  if (!convolutionMode) convolutionMode = defaults.convolutionMode;
  if (input.kind == InputType::Kind::FeedForward)
    throw ConfigError(where(index) + ": needs image input but receives " + input.toString());
  if (poolingType != PoolingType::MAX && poolingType != PoolingType::AVG)
    throw ConfigError(where(index) + ": poolingType " + toString(poolingType) +
                      " is not supported here (MAX or AVG); GlobalPoolingLayer pools whole images "
                      "with any type");
  geometry = WindowGeometry{kernel.h,  kernel.w,  stride.h,  stride.w, padding.h,
                            padding.w, padding.h, padding.w, 1,        1};
  std::string why;
  if (!resolveWindow(*convolutionMode, input.height, input.width, geometry, why))
    throw ConfigError(where(index) + ": " + why);
  if (geometry.padTop >= geometry.kernelH || geometry.padLeft >= geometry.kernelW ||
      geometry.padBottom >= geometry.kernelH || geometry.padRight >= geometry.kernelW)
    throw ConfigError(where(index) + ": padding must be smaller than the kernel");
  return InputType::convolutional(geometry.outH(input.height), geometry.outW(input.width),
                                  input.channels);
}

std::unique_ptr<layers::RuntimeLayer> SubsamplingLayer::instantiate() const {
  return std::make_unique<SubsamplingRuntime>(*this);
}

void SubsamplingLayer::writeFields(LayerFieldWriter& out) const {
  out.enumValue("poolingType", kPoolingNames, poolingType);
  writePair(out, "kernel", kernel);
  writePair(out, "stride", stride);
  writePair(out, "padding", padding);
  out.optionalEnum("convolutionMode", kConvolutionModeNames, convolutionMode);
}

void SubsamplingLayer::readFields(const LayerFieldReader& in) {
  poolingType = in.enumValue("poolingType", kPoolingNames);
  kernel = readPair(in, "kernel");
  stride = readPair(in, "stride");
  padding = readPair(in, "padding");
  convolutionMode = in.optionalEnum("convolutionMode", kConvolutionModeNames);
}

}  // namespace dl4cpp