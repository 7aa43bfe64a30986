#include "nn/conf/layers/SequenceAsImage.h"

#include <fmt/format.h>

#include "nn/core/Error.h"

namespace dl4cpp::detail {

namespace {

// (N, C, T) as (N, C, T, 1): the same values.
Tensor asImage(const Tensor& t) { return t.reshape(Shape{t.dim(0), t.dim(1), t.dim(2), 1}); }

}  // namespace

void checkSequenceWindow(const std::string& where, const InputType& input, ConvolutionMode mode,
                         const WindowGeometry& w) {
  if (input.kind != InputType::Kind::Recurrent)
    throw ConfigError(where + ": needs sequences (N, C, T) but receives " + input.toString() +
                      "; set the input type with InputType::recurrent(size)");
  if (w.kernelW != 1 || w.strideW != 1 || w.padLeft != 0 || w.dilationW != 1)
    throw ConfigError(where +
                      ": a 1-D window is one column wide (kernel, stride and dilation 1, "
                      "padding 0 across)");
  if (input.length == 0 && !(mode == ConvolutionMode::Same && w.strideH == 1))
    throw ConfigError(where +
                      ": sequences of any length need a window that keeps their length "
                      "(ConvolutionMode::Same, stride 1); declare the length with "
                      "InputType::recurrent(size, length) for other windows");
}

Shape SequenceAsImageRuntime::outputShape(const Shape& input) const {
  const Shape image = inner_->outputShape(Shape{input[0], input[1], input[2], 1});
  return {image[0], image[1], image[2]};
}

void SequenceAsImageRuntime::forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
                                     const ForwardContext& fwd) {
  mask_ = fwd.featuresMask != nullptr ? *fwd.featuresMask : Tensor();
  masked_ = Tensor();
  if (!mask_.empty()) {
    if (output.dim(2) != input.dim(2))
      throw ShapeError(fmt::format(
          "{}: it turns sequences of {} steps into {}, which the features mask (one entry per "
          "input step) cannot follow; keep the length (ConvolutionMode::Same, stride 1) or pass "
          "no mask",
          name_, input.dim(2), output.dim(2)));
    // Padded steps read as zeros, as the window's padding past a sequence's end does.
    if (maskedStore_.numel() < input.numel())  // grown, never shrunk: no allocation per batch
      maskedStore_ = Tensor(Shape{input.numel()}, input.device());
    masked_ = maskedStore_.view(0, input.shape());
    ctx.backend().maskSteps(input, mask_, masked_);
  }
  Tensor image = asImage(output);
  inner_->forward(ctx, asImage(masked_.empty() ? input : masked_), image, fwd);
  if (!mask_.empty()) ctx.backend().maskSteps(output, mask_, output);
}

void SequenceAsImageRuntime::backwardActivation(DeviceContext& ctx, const Tensor& output,
                                                Tensor& grad) {
  if (!mask_.empty()) ctx.backend().maskSteps(grad, mask_, grad);
  Tensor image = asImage(grad);
  inner_->backwardActivation(ctx, asImage(output), image);
}

void SequenceAsImageRuntime::backwardParams(DeviceContext& ctx, const Tensor& input,
                                            const Tensor& grad) {
  inner_->backwardParams(ctx, asImage(masked_.empty() ? input : masked_), asImage(grad));
}

void SequenceAsImageRuntime::backwardInput(DeviceContext& ctx, const Tensor& grad,
                                           Tensor& inputGrad) {
  Tensor image = asImage(inputGrad);
  inner_->backwardInput(ctx, asImage(grad), image);
  if (!mask_.empty()) ctx.backend().maskSteps(inputGrad, mask_, inputGrad);
}

void SequenceAsImageRuntime::backward(DeviceContext& ctx, const Tensor& input, const Tensor& grad,
                                      bool params, Tensor* inputGrad) {
  Tensor image = inputGrad != nullptr ? asImage(*inputGrad) : Tensor();
  inner_->backward(ctx, asImage(masked_.empty() ? input : masked_), asImage(grad), params,
                   inputGrad != nullptr ? &image : nullptr);
  if (inputGrad != nullptr && !mask_.empty())
    ctx.backend().maskSteps(*inputGrad, mask_, *inputGrad);
}

}  // namespace dl4cpp::detail
