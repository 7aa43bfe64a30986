#pragma once
// A wrapper that makes any layer's gradients wrong by 10%, to show a gradient check of that layer
// fails on a wrong gradient (and so that its passing means something):
//
//   .layer(testing::corruptGradients(GlobalPoolingLayer::Builder().build()))
//
// The wrapped layer behaves exactly as the original in forward; its parameter gradients and its
// input gradient are scaled by 1.1 after the original computes them. A layer that ends the network
// (an output or loss layer) takes corruptLossGradients instead: its loss stays its own, the
// gradients it then passes on are wrong.
#include <dl4cpp/dl4cpp.h>

#include <memory>
#include <string>
#include <vector>

#include "nn/layers/RuntimeLayer.h"

namespace dl4cpp::testing {

inline constexpr float kGradientCorruption = 1.1f;

class CorruptedGradientRuntime : public layers::RuntimeLayer {
 public:
  explicit CorruptedGradientRuntime(std::unique_ptr<layers::RuntimeLayer> inner)
      : inner_(std::move(inner)) {}

  void bindParams(const std::vector<Tensor>& params, const std::vector<Tensor>& grads) override {
    grads_ = grads;
    inner_->bindParams(params, grads);
  }
  void bindState(const std::vector<Tensor>& state) override { inner_->bindState(state); }
  Shape outputShape(const Shape& input) const override { return inner_->outputShape(input); }
  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override {
    inner_->forward(ctx, input, output, fwd);
  }
  void backwardActivation(DeviceContext& ctx, const Tensor& output, Tensor& grad) override {
    inner_->backwardActivation(ctx, output, grad);
  }
  void backwardParams(DeviceContext& ctx, const Tensor& input, const Tensor& grad) override {
    inner_->backwardParams(ctx, input, grad);
    for (Tensor& g : grads_) ctx.backend().scale(g, kGradientCorruption);
  }
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override {
    inner_->backwardInput(ctx, grad, inputGrad);
    ctx.backend().scale(inputGrad, kGradientCorruption);
  }
  void backward(DeviceContext& ctx, const Tensor& input, const Tensor& grad, bool params,
                Tensor* inputGrad) override {
    inner_->backward(ctx, input, grad, params, inputGrad);
    if (params)
      for (Tensor& g : grads_) ctx.backend().scale(g, kGradientCorruption);
    if (inputGrad != nullptr) ctx.backend().scale(*inputGrad, kGradientCorruption);
  }
  // The loss, and its gradient with respect to the pre-activation, are the wrapped layer's.
  layers::LossOutputRuntime* asLossOutput() override { return inner_->asLossOutput(); }

 private:
  std::unique_ptr<layers::RuntimeLayer> inner_;
  std::vector<Tensor> grads_;
};

// The configuration: the wrapped layer's in every respect but its runtime.
class CorruptedGradientLayer : public Layer {
 public:
  explicit CorruptedGradientLayer(const Layer& inner) : inner_(inner.clone()) {
    Layer::operator=(inner);
  }
  CorruptedGradientLayer(const CorruptedGradientLayer& other)
      : Layer(other), inner_(other.inner_->clone()) {}
  CorruptedGradientLayer& operator=(const CorruptedGradientLayer&) = delete;

  std::shared_ptr<Layer> clone() const override {
    return std::make_shared<CorruptedGradientLayer>(*this);
  }
  std::string typeName() const override { return inner_->typeName(); }
  bool consumesImages() const override { return inner_->consumesImages(); }
  bool acceptsRowsOrImages() const override { return inner_->acceptsRowsOrImages(); }
  bool consumesSequences() const override { return inner_->consumesSequences(); }
  bool acceptsSequences() const override { return inner_->acceptsSequences(); }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override {
    const InputType out = inner_->resolve(index, input, defaults);
    Layer::operator=(*inner_);  // the resolved common fields (updater, l2, ...) the network reads
    return out;
  }
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override {
    return std::make_unique<CorruptedGradientRuntime>(inner_->instantiate());
  }
  std::vector<ParamSpec> paramSpecs() const override { return inner_->paramSpecs(); }
  std::vector<StateSpec> stateSpecs() const override { return inner_->stateSpecs(); }

 private:
  std::shared_ptr<Layer> inner_;
};

inline CorruptedGradientLayer corruptGradients(const Layer& conf) {
  return CorruptedGradientLayer(conf);
}

// A layer that ends the network (OutputLayer, LossLayer, ...) with the same corruption. The list
// builder wants the last layer's configuration to be a LossOutput, so this derives from the
// configuration rather than wrapping it; its runtime is wrapped as corruptGradients wraps one.
template <typename LossConf>
class CorruptedLossLayer : public LossConf {
 public:
  explicit CorruptedLossLayer(const LossConf& conf) : LossConf(conf) {}
  std::shared_ptr<Layer> clone() const override {
    return std::make_shared<CorruptedLossLayer>(*this);
  }
  std::unique_ptr<layers::RuntimeLayer> instantiate() const override {
    return std::make_unique<CorruptedGradientRuntime>(LossConf::instantiate());
  }
};

template <typename LossConf>
CorruptedLossLayer<LossConf> corruptLossGradients(const LossConf& conf) {
  return CorruptedLossLayer<LossConf>(conf);
}

}  // namespace dl4cpp::testing
