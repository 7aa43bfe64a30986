#include "nn/backend/cpu/fusion/ConvolutionActivationStep.h"

#include "nn/backend/DeviceContext.h"
#include "nn/backend/OpFlops.h"
#include "nn/backend/cpu/CpuBackend.h"
#include "nn/backend/cpu/fusion/PlannedConvolution.h"

namespace dl4cpp::cpu {

namespace {

class ConvolutionActivationStep final : public NetworkStep {
 public:
  ConvolutionActivationStep(CpuBackend& backend, int first, const LayerDescription& convolution)
      : NetworkStep(first, 1), backend_(backend), conv_(convolution) {}

  void forward(DeviceContext& ctx, const LayerTensors& t, const ForwardContext& pass) override {
    (void)pass;  // RELU and LEAKYRELU keep nothing for their backward pass but the output
    const Tensor& x = t.inputs[first()];
    Tensor& y = t.outputs[first()];
    enterLayer(ctx, first());
    ctx.backend().runPlanned(OpPass::FORWARD,
                             convolutionFlops(x.shape(), conv_.w.shape(), y.shape()), [&] {
                               backend_.convolutionActivationForward(
                                   x, conv_.w, conv_.b, conv_.activation, y, conv_.geometry);
                             });
  }

  void backward(DeviceContext& ctx, const LayerTensors& t, Tensor* inputGradient) override {
    const Tensor& x = t.inputs[first()];
    const Tensor& y = t.outputs[first()];
    Tensor& grad = t.gradients[first()];
    enterLayer(ctx, first());
    if (inputGradient == nullptr) {
      ctx.backend().runPlanned(OpPass::BACKWARD_WEIGHTS,
                               convolutionFlops(x.shape(), conv_.dw.shape(), grad.shape()), [&] {
                                 backend_.convolutionActivationBackwardWeights(
                                     x, y, grad, conv_.activation, grad, conv_.dw, conv_.db,
                                     conv_.geometry);
                               });
      return;
    }
    Backend& ops = ctx.backend();
    ops.activationBackward(conv_.activation.kind, conv_.activation.alpha, Tensor(), y, grad, grad);
    conv_.gradients(ops, x, grad, *inputGradient);
  }

 private:
  CpuBackend& backend_;
  PlannedConvolution conv_;
};

}  // namespace

std::unique_ptr<NetworkStep> planConvolutionActivation(CpuBackend& backend,
                                                       const std::vector<LayerDescription>& layers,
                                                       int first) {
  const LayerDescription& convolution = layers[static_cast<size_t>(first)];
  const bool fits = convolution.kind == LayerDescription::Kind::CONVOLUTION &&
                    (convolution.activation == ActivationKind::RELU ||
                     convolution.activation == ActivationKind::LEAKYRELU);
  if (!fits) return nullptr;
  return std::make_unique<ConvolutionActivationStep>(backend, first, convolution);
}

}  // namespace dl4cpp::cpu
