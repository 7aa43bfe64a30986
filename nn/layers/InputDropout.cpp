#include "nn/layers/InputDropout.h"

#include "nn/layers/ScratchView.h"

namespace dl4cpp::layers {

namespace {
// Salt of the mask's stream within the layer's forward-context stream (which the wrapped layer
// keeps for itself).
constexpr uint64_t kDropoutStream = 0x64726f706f7574ULL;

}  // namespace

InputDropout::InputDropout(std::unique_ptr<RuntimeLayer> inner, double retainProbability)
    : inner_(std::move(inner)), retain_(static_cast<float>(retainProbability)) {}

void InputDropout::forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
                           const ForwardContext& fwd) {
  dropped_ = fwd.training;
  if (!dropped_) {
    inner_->forward(ctx, input, output, fwd);
    return;
  }
  mask_ = scratchView(maskStore_, input.shape(), ctx.device());
  droppedInput_ = scratchView(droppedStore_, input.shape(), ctx.device());
  ctx.backend().dropoutMask(Random::deriveSeed(fwd.seed, kDropoutStream), retain_, mask_);
  ctx.backend().multiply(input, mask_, droppedInput_);
  inner_->forward(ctx, droppedInput_, output, fwd);
}

void InputDropout::maskGradient(DeviceContext& ctx, Tensor& inputGrad) const {
  if (dropped_) ctx.backend().multiply(inputGrad, mask_, inputGrad);
}

void InputDropout::backward(DeviceContext& ctx, const Tensor& input, const Tensor& grad,
                            bool params, Tensor* inputGrad) {
  inner_->backward(ctx, seenInput(input), grad, params, inputGrad);
  if (inputGrad != nullptr) maskGradient(ctx, *inputGrad);
}

void InputDropout::backwardParams(DeviceContext& ctx, const Tensor& input, const Tensor& grad) {
  inner_->backwardParams(ctx, seenInput(input), grad);
}

void InputDropout::backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) {
  inner_->backwardInput(ctx, grad, inputGrad);
  maskGradient(ctx, inputGrad);
}

std::unique_ptr<RuntimeLayer> withInputDropout(double retainProbability,
                                               std::unique_ptr<RuntimeLayer> runtime) {
  if (retainProbability <= 0 || retainProbability >= 1) return runtime;
  return std::make_unique<InputDropout>(std::move(runtime), retainProbability);
}

}  // namespace dl4cpp::layers
