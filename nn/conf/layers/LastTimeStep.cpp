#include "nn/conf/layers/LastTimeStep.h"

#include "nn/backend/ops/RecurrentOps.h"
#include "nn/conf/layers/SequenceSteps.h"
#include "nn/core/Error.h"
#include "nn/layers/RuntimeLayer.h"
#include "nn/layers/ScratchView.h"

namespace dl4cpp {

namespace {

// The last steps are picked and put back with the step gather/scatter ops, through a mask with one
// real step per example: its last one.
class LastTimeStepRuntime : public layers::RuntimeLayer {
 public:
  explicit LastTimeStepRuntime(std::unique_ptr<layers::RuntimeLayer> inner)
      : inner_(std::move(inner)) {}

  void bindParams(const std::vector<Tensor>& params, const std::vector<Tensor>& grads) override {
    inner_->bindParams(params, grads);
  }
  void bindState(const std::vector<Tensor>& state) override { inner_->bindState(state); }
  Shape outputShape(const Shape& input) const override {
    const Shape seq = inner_->outputShape(input);
    return {seq[0], seq[1]};
  }
  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override {
    const int64_t n = input.dim(0), t = input.dim(2);
    if (fwd.featuresMask != nullptr && !fwd.featuresMask->empty() &&
        fwd.featuresMask->shape() != Shape{n, t})
      throw ShapeError("LastTimeStep: the features mask " + fwd.featuresMask->shape().toString() +
                       " does not match sequences " + input.shape().toString());
    input_ = input;
    seq_ = layers::scratchView(seqStore_, inner_->outputShape(input.shape()), input.device());
    inner_->forward(ctx, input, seq_, fwd);
    last_ = detail::lastStepMask(fwd.featuresMask, n, t);
    ctx.backend().gatherSteps(seq_, last_, output);
  }
  void backward(DeviceContext& ctx, const Tensor& input, const Tensor& grad, bool params,
                Tensor* inputGrad) override {
    Tensor dseq = layers::scratchView(dseqStore_, seq_.shape(), grad.device());
    ctx.backend().scatterSteps(grad, last_, dseq);
    inner_->backwardActivation(ctx, seq_, dseq);
    inner_->backward(ctx, input, dseq, params, inputGrad);
  }
  void backwardParams(DeviceContext& ctx, const Tensor& input, const Tensor& grad) override {
    backward(ctx, input, grad, true, nullptr);
  }
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override {
    backward(ctx, input_, grad, false, &inputGrad);
  }

 private:
  std::unique_ptr<layers::RuntimeLayer> inner_;
  Tensor input_;           // the last forward pass's input (the network keeps it)
  Tensor seqStore_, seq_;  // the wrapped layer's output, (N, nOut, T)
  Tensor dseqStore_;       // its gradient
  Tensor last_;            // (N, T) on the host: 1 at each example's last real step
};

}  // namespace

InputType LastTimeStep::resolve(int index, const InputType& input, const LayerDefaults& defaults) {
  const InputType out = resolveUnderlying(index, input, defaults);
  return InputType::feedForward(out.size);
}

std::unique_ptr<layers::RuntimeLayer> LastTimeStep::instantiate() const {
  return std::make_unique<LastTimeStepRuntime>(underlying_->instantiate());
}

}  // namespace dl4cpp
