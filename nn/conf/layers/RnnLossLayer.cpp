#include "nn/conf/layers/RnnLossLayer.h"

#include "nn/backend/ops/RecurrentOps.h"
#include "nn/core/Error.h"
#include "nn/layers/LossOutputRuntime.h"
#include "nn/layers/RuntimeLayer.h"

namespace dl4cpp {

namespace {

// A view (rows, cols) of `storage`, grown when too small.
Tensor rowsOf(Tensor& storage, int64_t rows, int64_t cols, Device device) {
  if (storage.numel() < rows * cols) storage = Tensor(Shape{rows * cols}, device);
  return storage.view(0, Shape{rows, cols});
}

// The activation runs on the steps as rows (example, step), so SOFTMAX normalises each step's
// features; the loss takes the real steps' rows only.
class RnnLossRuntime : public layers::RuntimeLayer, public layers::LossOutputRuntime {
 public:
  explicit RnnLossRuntime(const RnnLossLayer& conf)
      : layers::LossOutputRuntime(conf.lossFunction),
        activation_(*conf.activation, static_cast<float>(conf.leakyReluAlpha)) {}
  layers::LossOutputRuntime* asLossOutput() override { return this; }

  Shape outputShape(const Shape& input) const override { return input; }
  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override {
    const int64_t rows = input.dim(0) * input.dim(2), c = input.dim(1);
    Tensor in = rowsOf(inStore_, rows, c, input.device());
    Tensor out = rowsOf(outStore_, rows, c, input.device());
    ctx.backend().gatherSteps(input, Tensor(), in);
    activation_.forward(ctx, in, out, fwd.training);
    ctx.backend().scatterSteps(out, Tensor(), output);
  }
  // The loss's gradient is already with respect to the pre-activation, the input.
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override {
    ctx.backend().copy(grad, inputGrad);
  }

  double lossGradient(DeviceContext& ctx, const Tensor& output, const Tensor& labels,
                      Tensor& grad) override {
    const Tensor mask = compact(ctx, output, labels);
    Tensor g = rowsOf(lossGradStore_, y_.dim(0), y_.dim(1), output.device());
    const double sum = ctx.backend().lossForwardBackward(loss_, activation_.kind(),
                                                         activation_.alpha(), Tensor(), y_, l_, g);
    ctx.backend().scatterSteps(g, mask, grad);
    return sum;
  }
  double lossScore(DeviceContext& ctx, const Tensor& output, const Tensor& labels) override {
    compact(ctx, output, labels);
    return ctx.backend().lossScore(loss_, y_, l_);
  }

 protected:
  const layers::LayerActivation& lossActivation() const override { return activation_; }

 private:
  // y_, l_ = the real steps of output and labels as rows; returns the mask they follow.
  Tensor compact(DeviceContext& ctx, const Tensor& output, const Tensor& labels) {
    if (labels.shape() != output.shape())
      throw ShapeError("RnnLossLayer: labels " + labels.shape().toString() +
                       " do not match the output " + output.shape().toString());
    Tensor mask = labelsMask_ != nullptr ? *labelsMask_ : Tensor();
    const int64_t n = output.dim(0), c = output.dim(1), t = output.dim(2);
    if (!mask.empty() && mask.shape() != Shape{n, t})
      throw ShapeError("RnnLossLayer: the labels mask " + mask.shape().toString() +
                       " does not match labels " + labels.shape().toString());
    int64_t r = n * t;
    if (!mask.empty()) {
      const Tensor host = mask.toHost();
      r = 0;
      for (int64_t i = 0; i < host.numel(); ++i) r += host.data()[i] != 0.0f;
    }
    y_ = rowsOf(yStore_, r, c, output.device());
    l_ = rowsOf(lStore_, r, c, output.device());
    ctx.backend().gatherSteps(output, mask, y_);
    ctx.backend().gatherSteps(labels, mask, l_);
    return mask;
  }

  layers::LayerActivation activation_;
  Tensor inStore_, outStore_, lossGradStore_, yStore_, lStore_;
  Tensor y_, l_;  // the real steps of output and labels, (R, C)
};

}  // namespace

InputType RnnLossLayer::resolve(int index, const InputType& input, const LayerDefaults& defaults) {
  inheritDefaults(defaults);
  if (input.kind != InputType::Kind::Recurrent)
    throw ConfigError(where(index) + " needs sequences but receives " + input.toString() +
                      "; set the input type with InputType::recurrent(size)");
  validateCommon(index);
  validateLoss(where(index), *activation);
  if (activationBackwardNeedsInput(*activation))
    throw ConfigError(where(index) + ": activation " + toString(*activation) +
                      " is not available in RnnLossLayer; use SOFTMAX, SIGMOID, IDENTITY or "
                      "another activation whose derivative follows from its output");
  return InputType::recurrent(input.size, input.length);
}

std::unique_ptr<layers::RuntimeLayer> RnnLossLayer::instantiate() const {
  return std::make_unique<RnnLossRuntime>(*this);
}

void RnnLossLayer::writeFields(LayerFieldWriter& out) const { writeLoss(out); }

void RnnLossLayer::readFields(const LayerFieldReader& in) { readLoss(in); }

}  // namespace dl4cpp
