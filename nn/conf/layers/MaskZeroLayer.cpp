#include "nn/conf/layers/MaskZeroLayer.h"

#include <cmath>

#include "nn/backend/ops/RecurrentOps.h"
#include "nn/core/Error.h"
#include "nn/layers/RuntimeLayer.h"

namespace dl4cpp {

namespace {

class MaskZeroRuntime : public layers::RuntimeLayer {
 public:
  MaskZeroRuntime(std::unique_ptr<layers::RuntimeLayer> inner, float value)
      : inner_(std::move(inner)), value_(value) {}

  void bindParams(const std::vector<Tensor>& params, const std::vector<Tensor>& grads) override {
    inner_->bindParams(params, grads);
  }
  void bindState(const std::vector<Tensor>& state) override { inner_->bindState(state); }
  Shape outputShape(const Shape& input) const override { return inner_->outputShape(input); }
  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override {
    const Shape shape{input.dim(0), input.dim(2)};
    if (mask_.shape() != shape) mask_ = Tensor(shape);
    ctx.backend().maskOfValue(input, value_, mask_);
    ForwardContext masked = fwd;
    masked.featuresMask = &mask_;
    inner_->forward(ctx, input, output, masked);
  }
  void backwardActivation(DeviceContext& ctx, const Tensor& output, Tensor& grad) override {
    inner_->backwardActivation(ctx, output, grad);
  }
  void backwardParams(DeviceContext& ctx, const Tensor& input, const Tensor& grad) override {
    inner_->backwardParams(ctx, input, grad);
  }
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override {
    inner_->backwardInput(ctx, grad, inputGrad);
  }
  void backward(DeviceContext& ctx, const Tensor& input, const Tensor& grad, bool params,
                Tensor* inputGrad) override {
    inner_->backward(ctx, input, grad, params, inputGrad);
  }

 private:
  std::unique_ptr<layers::RuntimeLayer> inner_;
  float value_;
  Tensor mask_;  // (N, T) on the host: the mask the wrapped layer ran with
};

}  // namespace

InputType MaskZeroLayer::resolve(int index, const InputType& input, const LayerDefaults& defaults) {
  if (!std::isfinite(maskingValue))
    throw ConfigError(where(index) + ": maskingValue must be finite");
  return resolveUnderlying(index, input, defaults);
}

std::unique_ptr<layers::RuntimeLayer> MaskZeroLayer::instantiate() const {
  return std::make_unique<MaskZeroRuntime>(underlying_->instantiate(),
                                           static_cast<float>(maskingValue));
}

void MaskZeroLayer::writeFields(LayerFieldWriter& out) const {
  out.number("maskingValue", maskingValue);
  BaseWrapperLayer::writeFields(out);
}

void MaskZeroLayer::readFields(const LayerFieldReader& in) {
  maskingValue = in.number("maskingValue");
  BaseWrapperLayer::readFields(in);
}

}  // namespace dl4cpp
