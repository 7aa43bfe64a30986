#pragma once
// Inverted dropout on a layer's input (DL4J's dropOut(p) on any layer, and DropoutLayer): in a
// training forward pass, each input value is kept with probability p and scaled by 1 / p, or set
// to 0; the wrapped layer sees the result. Inference passes the input through untouched. The
// mask comes from the layer's forward-context stream (ForwardContext.h) through a counter-based
// draw, so it depends on the seed, the replica, the iteration and the layer only: two runs with
// the same seed and worker count are bit-identical, whatever the threads or device.
#include <memory>

#include "nn/layers/RuntimeLayer.h"

namespace dl4cpp::layers {

class InputDropout : public RuntimeLayer {
 public:
  InputDropout(std::unique_ptr<RuntimeLayer> inner, double retainProbability);

  void bindParams(const std::vector<Tensor>& params, const std::vector<Tensor>& grads) override {
    inner_->bindParams(params, grads);
  }
  void bindState(const std::vector<Tensor>& state) override { inner_->bindState(state); }
  Shape outputShape(const Shape& input) const override { return inner_->outputShape(input); }

  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override;
  void backwardActivation(DeviceContext& ctx, const Tensor& output, Tensor& grad) override {
    inner_->backwardActivation(ctx, output, grad);
  }
  void backwardParams(DeviceContext& ctx, const Tensor& input, const Tensor& grad) override;
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override;
  void backward(DeviceContext& ctx, const Tensor& input, const Tensor& grad, bool params,
                Tensor* inputGrad) override;
  LossOutputRuntime* asLossOutput() override { return inner_->asLossOutput(); }

 private:
  // What the wrapped layer saw as its input in the last forward pass.
  const Tensor& seenInput(const Tensor& input) const { return dropped_ ? droppedInput_ : input; }
  // dL/dx = mask * dL/d(dropped input), in place.
  void maskGradient(DeviceContext& ctx, Tensor& inputGrad) const;

  std::unique_ptr<RuntimeLayer> inner_;
  float retain_;
  Tensor maskStore_, droppedStore_;  // grown to the largest input seen
  Tensor mask_, droppedInput_;       // views of the last training forward pass
  bool dropped_ = false;             // whether the last forward pass applied dropout
};

// `runtime`, wrapped in InputDropout when its configuration asks for dropout on its input, that
// is when the layer's dropOut `retainProbability` is strictly between 0 and 1.
std::unique_ptr<RuntimeLayer> withInputDropout(double retainProbability,
                                               std::unique_ptr<RuntimeLayer> runtime);

}  // namespace dl4cpp::layers
