#pragma once
// The activation of a runtime layer, y = f(z), and its backward pass, dL/dz from dL/dy, through the
// backend: what dense, output and convolution layers apply to the pre-activation z their own op
// computes, and what ActivationLayer applies to its input.
//
// Most activations' derivatives are functions of their output y, which the network keeps until
// the backward pass: those layers write z straight into their output tensor and f runs in place.
// The others (activationBackwardNeedsInput: GELU, GELU_PRECISE, SWISH, SOFTPLUS) need z itself.
// For them a training-mode forward pass writes z into a buffer this object owns, which grows to the
// largest shape seen and is then reused (steady-state steps allocate nothing), and f runs from
// there into the output. ActivationLayer's z is its input, which the network also keeps until the
// backward pass: it is referred to, not copied. Inference keeps nothing.
#include "nn/backend/DeviceContext.h"
#include "nn/backend/OpTypes.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::layers {

class LayerActivation {
 public:
  LayerActivation(ActivationKind kind, float alpha) : kind_(kind), alpha_(alpha) {}

  ActivationKind kind() const { return kind_; }
  float alpha() const { return alpha_; }

  // For a layer whose op computes z: runs computePreActivation(Tensor& z), which must write z
  // (shaped as `output`) into the tensor it is given, then writes f(z) into `output`.
  template <typename ComputePreActivation>
  void forward(DeviceContext& ctx, Tensor& output, bool training,
               ComputePreActivation&& computePreActivation) {
    if (!keepsInput(training)) {
      computePreActivation(output);
      ctx.backend().activationForward(kind_, alpha_, output, output);
      return;
    }
    input_ = buffer(output);
    computePreActivation(input_);
    ctx.backend().activationForward(kind_, alpha_, input_, output);
  }
  // For a layer whose input is z: output = f(input).
  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output, bool training);

  // dx = f'(z) * dy, where `output` is this pass's y (dx may alias dy). Follows a training-mode
  // forward pass; BackendError where f' needs a z that no such pass kept.
  void backward(DeviceContext& ctx, const Tensor& output, const Tensor& dy, Tensor& dx) const;

  // The z the last training-mode forward pass kept (empty where f' does not read it): what
  // Backend::lossForwardBackward reads as z.
  const Tensor& keptInput() const { return input_; }

 private:
  // Whether this forward pass keeps z (and forgets the z of an earlier pass when it does not).
  bool keepsInput(bool training);
  // A view of the buffer shaped as `output`, grown when `output` is larger than any before.
  Tensor buffer(const Tensor& output);

  ActivationKind kind_;
  float alpha_;
  Tensor storage_;  // the buffer z is written into, as large as the largest z so far
  Tensor input_;    // z of the last training-mode forward pass, where f' reads it
};

}  // namespace dl4cpp::layers
