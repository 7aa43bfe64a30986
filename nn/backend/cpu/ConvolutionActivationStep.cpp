#include <dl4cpp/nn/backend/OpFlops.h>
#include <dl4cpp/nn/backend/cpu/Activations.h>
#include <dl4cpp/nn/backend/cpu/ConvolutionActivationStep.h>
#include <dl4cpp/nn/backend/cpu/CpuBackend.h>
#include <dl4cpp/nn/tensor/DeviceContext.h>

namespace dl4cpp::cpu {

namespace {

class ConvolutionActivationStep final : public NetworkStep {
 public:
  ConvolutionActivationStep(CpuBackend& backend, int first, const LayerDescription& convolution)
      : NetworkStep(first, 1),
        backend_(backend),
        w_(convolution.w),
        b_(convolution.b),
        dw_(convolution.dw),
        db_(convolution.db),
        activation_{convolution.activation, convolution.alpha},
        g_(convolution.geometry) {}

  void forward(DeviceContext& ctx, const LayerTensors& t, const ForwardContext& pass) override {
    (void)pass;  // RELU and LEAKYRELU keep nothing for their backward pass but the output
    const Tensor& x = t.inputs[first()];
    Tensor& y = t.outputs[first()];
    enterLayer(ctx, first());
    ctx.backend().runPlanned(
        OpPass::FORWARD, convolutionFlops(x.shape(), w_.shape(), y.shape()),
        [&] { backend_.convolutionActivationForward(x, w_, b_, activation_, y, g_); });
  }

  void backward(DeviceContext& ctx, const LayerTensors& t, Tensor* inputGradient) override {
    const Tensor& x = t.inputs[first()];
    const Tensor& y = t.outputs[first()];
    Tensor& grad = t.gradients[first()];
    enterLayer(ctx, first());
    if (inputGradient == nullptr) {
      ctx.backend().runPlanned(OpPass::BACKWARD_WEIGHTS,
                               convolutionFlops(x.shape(), dw_.shape(), grad.shape()), [&] {
                                 backend_.convolutionActivationBackwardWeights(
                                     x, y, grad, activation_, grad, dw_, db_, g_);
                               });
      return;
    }
    Backend& ops = ctx.backend();
    ops.activationBackward(activation_.kind, activation_.alpha, Tensor(), y, grad, grad);
    ops.convolutionBackwardWeights(x, grad, dw_, db_, g_);
    ops.convolutionBackwardData(grad, w_, *inputGradient, g_);
  }

 private:
  CpuBackend& backend_;
  Tensor w_, b_, dw_, db_;
  FusedActivation activation_;
  WindowGeometry g_;
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
