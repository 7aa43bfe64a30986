#include <dl4cpp/nn/backend/OpFlops.h>
#include <dl4cpp/nn/backend/cpu/ConvolutionPoolingStep.h>
#include <dl4cpp/nn/backend/cpu/CpuBackend.h>
#include <dl4cpp/nn/tensor/DeviceContext.h>

namespace dl4cpp::cpu {

namespace {

class ConvolutionMaxPoolingStep final : public NetworkStep {
 public:
  ConvolutionMaxPoolingStep(CpuBackend& backend, int first, const LayerDescription& convolution,
                            const LayerDescription& pooling)
      : NetworkStep(first, 2),
        backend_(backend),
        w_(convolution.w),
        b_(convolution.b),
        dw_(convolution.dw),
        db_(convolution.db),
        convG_(convolution.geometry),
        poolG_(pooling.geometry) {}

  void forward(DeviceContext& ctx, const LayerTensors& t, const ForwardContext& pass) override {
    const Tensor& x = t.inputs[first()];
    Tensor& convOutput = t.outputs[first()];
    enterLayer(ctx, first());
    // Whether the pooling keeps its arg-max follows the pooling layer's mode (the convolution,
    // with the identity activation, has none): a frozen pair runs in inference mode.
    ctx.backend().runPlanned(
        OpPass::FORWARD, convolutionFlops(x.shape(), w_.shape(), convOutput.shape()), [&] {
          backend_.convolutionMaxPoolingForward(x, w_, b_, convOutput, t.outputs[last()], convG_,
                                                poolG_, pass.trainingFor(last()), workspace_);
        });
  }

  void backward(DeviceContext& ctx, const LayerTensors& t, Tensor* inputGradient) override {
    const Tensor& x = t.inputs[first()];
    const Tensor& dPooled = t.gradients[last()];
    Tensor& convGrad = t.gradients[first()];
    if (inputGradient == nullptr) {
      enterLayer(ctx, first());
      ctx.backend().runPlanned(OpPass::BACKWARD_WEIGHTS,
                               convolutionFlops(x.shape(), dw_.shape(), convGrad.shape()), [&] {
                                 backend_.convolutionMaxPoolingBackwardWeights(
                                     x, dPooled, workspace_, convGrad, dw_, db_, convG_, poolG_);
                               });
      return;
    }
    Backend& ops = ctx.backend();
    enterLayer(ctx, last());
    ops.poolingBackward(PoolingKind::MAX, dPooled, convGrad, poolG_, workspace_);
    enterLayer(ctx, first());
    ops.convolutionBackwardWeights(x, convGrad, dw_, db_, convG_);
    ops.convolutionBackwardData(convGrad, w_, *inputGradient, convG_);
  }

 private:
  CpuBackend& backend_;
  Tensor w_, b_, dw_, db_;
  WindowGeometry convG_, poolG_;
  Tensor workspace_;  // the pooling's arg-max of the last training forward
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
                    convolution.activation == ActivationKind::IDENTITY &&
                    convolution.readers == std::vector<int>{first + 1} &&
                    pooling.kind == Kind::POOLING && pooling.pooling == PoolingKind::MAX;
  if (!pair) return nullptr;
  return std::make_unique<ConvolutionMaxPoolingStep>(backend, first, convolution, pooling);
}

}  // namespace dl4cpp::cpu
