#include "nn/layers/LayerActivation.h"

#include "nn/backend/OpNames.h"

namespace dl4cpp::layers {

bool LayerActivation::keepsInput(bool training) {
  if (!activationBackwardNeedsInput(kind_)) return false;
  if (!training) input_ = Tensor();
  return training;
}

Tensor LayerActivation::buffer(const Tensor& output) {
  if (storage_.numel() < output.numel() || storage_.device() != output.device())
    storage_ = Tensor(Shape{output.numel()}, output.device());
  return storage_.view(0, output.shape());
}

void LayerActivation::forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
                              bool training) {
  if (keepsInput(training)) input_ = input;
  ctx.backend().activationForward(kind_, alpha_, input, output);
}

void LayerActivation::backward(DeviceContext& ctx, const Tensor& output, const Tensor& dy,
                               Tensor& dx) const {
  if (activationBackwardNeedsInput(kind_) && input_.numel() != output.numel())
    throw BackendError("the backward pass of activation " + toString(kind_) +
                       " reads the input of a training-mode forward pass; run "
                       "forward(training=true) on this batch first");
  ctx.backend().activationBackward(kind_, alpha_, input_, output, dy, dx);
}

}  // namespace dl4cpp::layers
