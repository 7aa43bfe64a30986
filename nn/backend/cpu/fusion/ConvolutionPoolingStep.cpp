#include "nn/backend/cpu/fusion/ConvolutionPoolingStep.h"

#include "nn/backend/DeviceContext.h"
#include "nn/backend/OpFlops.h"
#include "nn/backend/cpu/CpuBackend.h"
#include "nn/backend/cpu/fusion/PlannedConvolution.h"

namespace dl4cpp::cpu {

namespace {

class ConvolutionMaxPoolingStep final : public NetworkStep {
 public:
  ConvolutionMaxPoolingStep(CpuBackend& backend, int first, const LayerDescription& convolution,
                            const LayerDescription& pooling)
      : NetworkStep(first, 2), backend_(backend), conv_(convolution), poolG_(pooling.geometry) {}

  void forward(DeviceContext& ctx, const LayerTensors& t, const ForwardContext& pass) override {
    const Tensor& x = t.inputs[first()];
    Tensor& convOutput = t.outputs[first()];
    enterLayer(ctx, first());
    // Whether the pooling keeps its arg-max follows the pooling layer's mode (the convolution's
    // activation keeps nothing: its backward pass reads the pooled output): a frozen pair runs in
    // inference mode.
    ctx.backend().runPlanned(
        OpPass::FORWARD, convolutionFlops(x.shape(), conv_.w.shape(), convOutput.shape()), [&] {
          backend_.convolutionMaxPoolingForward(x, conv_.w, conv_.b, conv_.activation, convOutput,
                                                t.outputs[last()], conv_.geometry, poolG_,
                                                pass.trainingFor(last()), workspace_);
        });
  }

  void backward(DeviceContext& ctx, const LayerTensors& t, Tensor* inputGradient) override {
    const Tensor& x = t.inputs[first()];
    const Tensor dPooled = activationGradient(ctx, t);
    Tensor& convGrad = t.gradients[first()];
    if (inputGradient == nullptr) {
      enterLayer(ctx, first());
      ctx.backend().runPlanned(
          OpPass::BACKWARD_WEIGHTS, convolutionFlops(x.shape(), conv_.dw.shape(), convGrad.shape()),
          [&] {
            backend_.convolutionMaxPoolingBackwardWeights(
                x, dPooled, workspace_, convGrad, conv_.dw, conv_.db, conv_.geometry, poolG_);
          });
      return;
    }
    Backend& ops = ctx.backend();
    enterLayer(ctx, last());
    ops.poolingBackward(PoolingKind::MAX, dPooled, convGrad, poolG_, workspace_);
    enterLayer(ctx, first());
    conv_.gradients(ops, x, convGrad, *inputGradient);
  }

 private:
  // The pooled output's gradient with the activation's backward pass applied. The gradient of the
  // convolution's output is the pooled gradient at each window's arg-max and 0 elsewhere, and the
  // arg-max's activated value is the pooled output itself: f'(z) read from the pooled output is
  // the same number at a quarter of the elements (the windows do not overlap, so no element sums
  // two windows' gradients). The pooled gradient itself is left as the network gave it.
  Tensor activationGradient(DeviceContext& ctx, const LayerTensors& t) {
    const Tensor& dPooled = t.gradients[last()];
    if (conv_.activation.kind == ActivationKind::IDENTITY) return dPooled;
    if (activated_.numel() < dPooled.numel()) activated_ = Tensor(Shape{dPooled.numel()});
    Tensor gradient = activated_.view(0, dPooled.shape());
    enterLayer(ctx, first());
    ctx.backend().activationBackward(conv_.activation.kind, conv_.activation.alpha, Tensor(),
                                     t.outputs[last()], dPooled, gradient);
    return gradient;
  }

  CpuBackend& backend_;
  PlannedConvolution conv_;
  WindowGeometry poolG_;
  Tensor workspace_;  // the pooling's arg-max of the last training forward
  Tensor activated_;  // storage of the pooled gradient through the activation, grown to the batch
};

}  // namespace

std::unique_ptr<NetworkStep> planConvolutionMaxPooling(CpuBackend& backend,
                                                       const std::vector<LayerDescription>& layers,
                                                       int first) {
  using Kind = LayerDescription::Kind;
  const size_t i = static_cast<size_t>(first);
  if (i + 1 >= layers.size()) return nullptr;
  const LayerDescription& convolution = layers[i];
  const LayerDescription& pooling = layers[i + 1];
  const bool pair = convolution.kind == Kind::CONVOLUTION &&
                    fusableActivation(convolution.activation) &&
                    convolution.readers == std::vector<int>{first + 1} &&
                    pooling.kind == Kind::POOLING && pooling.pooling == PoolingKind::MAX;
  // With an activation between them, backward reads f' from the pooled output, which is only the
  // same as the layers' numbers where each convolution output is in one window at most.
  const WindowGeometry& g = pooling.geometry;
  const bool windowsDisjoint = g.strideH >= (g.kernelH - 1) * g.dilationH + 1 &&
                               g.strideW >= (g.kernelW - 1) * g.dilationW + 1;
  if (!pair || (convolution.activation != ActivationKind::IDENTITY && !windowsDisjoint))
    return nullptr;
  return std::make_unique<ConvolutionMaxPoolingStep>(backend, first, convolution, pooling);
}

}  // namespace dl4cpp::cpu
