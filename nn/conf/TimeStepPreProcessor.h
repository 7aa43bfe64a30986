#pragma once
// The runtime of the preprocessors that reorder values between sequences (N, C, T) and one row or
// image per time step (N*T rows, example by example, as DL4J orders them): RnnToFeedForward,
// RnnToCnn, FeedForwardToRnn and CnnToRnn (Enums.h). It wraps the layer that
// consumes the reordered values: the network hands it the producer's tensor, the wrapped layer
// reads the reordered copy, and the wrapped layer's input gradient is reordered back. Private to
// the library (not installed).
#include <memory>

#include "nn/conf/Enums.h"
#include "nn/conf/InputType.h"
#include "nn/layers/RuntimeLayer.h"

namespace dl4cpp::detail {

class TimeStepPreProcessor : public layers::RuntimeLayer {
 public:
  // `consumed`: what `inner` reads (the layer's input type after the preprocessor).
  TimeStepPreProcessor(std::unique_ptr<layers::RuntimeLayer> inner, InputPreProcessor preProcessor,
                       const InputType& consumed);

  void bindParams(const std::vector<Tensor>& params, const std::vector<Tensor>& grads) override {
    inner_->bindParams(params, grads);
  }
  void bindState(const std::vector<Tensor>& state) override { inner_->bindState(state); }
  Shape outputShape(const Shape& input) const override;

  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override;
  void backwardActivation(DeviceContext& ctx, const Tensor& output, Tensor& grad) override {
    inner_->backwardActivation(ctx, output, grad);
  }
  void backwardParams(DeviceContext& ctx, const Tensor& input, const Tensor& grad) override {
    (void)input;
    inner_->backwardParams(ctx, seen_, grad);
  }
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override;
  void backward(DeviceContext& ctx, const Tensor& input, const Tensor& grad, bool params,
                Tensor* inputGrad) override;
  layers::LossOutputRuntime* asLossOutput() override { return inner_->asLossOutput(); }

 private:
  // What the wrapped layer reads for a producer's tensor of shape `input` whose sequences have
  // `steps` time steps.
  Shape consumedShape(const Shape& input, int64_t steps) const;
  // `to` = `from` reordered as this preprocessor reorders (`forward`) or back.
  void reorder(DeviceContext& ctx, const Tensor& from, Tensor& to, bool forward) const;

  std::unique_ptr<layers::RuntimeLayer> inner_;
  bool toSteps_;  // sequences to rows or images per step (RnnToFeedForward, RnnToCnn)
  InputType consumed_;
  int64_t steps_ = 0;                // the time steps of the last forward pass
  Tensor seenStore_, seen_;          // the reordered input of the last forward pass
  Tensor seenGradStore_, seenGrad_;  // its gradient
};

// `runtime`, wrapped in a TimeStepPreProcessor when `preProcessor` reorders values.
std::unique_ptr<layers::RuntimeLayer> withPreProcessor(
    InputPreProcessor preProcessor, const InputType& consumed,
    std::unique_ptr<layers::RuntimeLayer> runtime);

}  // namespace dl4cpp::detail
