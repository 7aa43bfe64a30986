#include "nn/conf/layers/RnnOutputLayer.h"

#include "nn/conf/layers/DenseRuntime.h"
#include "nn/core/Error.h"
#include "nn/layers/LossOutputRuntime.h"

namespace dl4cpp {

namespace {

// Steps where `mask` (N, T) is 1, or n t without one.
int64_t realSteps(const Tensor* mask, int64_t n, int64_t t) {
  if (mask == nullptr || mask->empty()) return n * t;
  const Tensor host = mask->toHost();
  int64_t r = 0;
  for (int64_t i = 0; i < host.numel(); ++i) r += host.data()[i] != 0.0f;
  return r;
}

// A view (rows, cols) of `storage`, grown when too small.
Tensor rowsOf(Tensor& storage, int64_t rows, int64_t cols, Device device) {
  if (storage.numel() < rows * cols) storage = Tensor(Shape{rows * cols}, device);
  return storage.view(0, Shape{rows, cols});
}

// The dense layer run on the steps as rows (example, step): sequences are gathered into rows,
// the dense layer's ops run on those, and the results scattered back.
class RnnOutputRuntime : public detail::DenseRuntime, public layers::LossOutputRuntime {
 public:
  explicit RnnOutputRuntime(const RnnOutputLayer& conf)
      : DenseRuntime(conf), LossOutputRuntime(conf.lossFunction) {}
  layers::LossOutputRuntime* asLossOutput() override { return this; }

  Shape outputShape(const Shape& input) const override { return {input[0], nOut_, input[2]}; }

  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override {
    const int64_t rows = input.dim(0) * input.dim(2);
    rowsIn_ = rowsOf(inStore_, rows, nIn_, input.device());
    rowsOut_ = rowsOf(outStore_, rows, nOut_, input.device());
    ctx.backend().gatherSteps(input, Tensor(), rowsIn_);
    DenseRuntime::forward(ctx, rowsIn_, rowsOut_, fwd);
    ctx.backend().scatterSteps(rowsOut_, Tensor(), output);
  }
  void backwardParams(DeviceContext& ctx, const Tensor& input, const Tensor& grad) override {
    (void)input;
    DenseRuntime::backwardParams(ctx, rowsIn_, gradRows(ctx, grad));
  }
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override {
    Tensor dxRows = rowsOf(dxStore_, rowsIn_.dim(0), nIn_, grad.device());
    DenseRuntime::backwardInput(ctx, gradRows(ctx, grad), dxRows);
    ctx.backend().scatterSteps(dxRows, Tensor(), inputGrad);
  }

  double lossGradient(DeviceContext& ctx, const Tensor& output, const Tensor& labels,
                      Tensor& grad) override {
    const Tensor mask = compact(ctx, output, labels);
    Tensor g = rowsOf(lossGradStore_, y_.dim(0), nOut_, output.device());
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
      throw ShapeError("RnnOutputLayer: labels " + labels.shape().toString() +
                       " do not match the output " + output.shape().toString());
    Tensor mask = labelsMask_ != nullptr ? *labelsMask_ : Tensor();
    const int64_t n = output.dim(0), t = output.dim(2);
    if (!mask.empty() && mask.shape() != Shape{n, t})
      throw ShapeError("RnnOutputLayer: the labels mask " + mask.shape().toString() +
                       " does not match labels " + labels.shape().toString());
    const int64_t r = realSteps(&mask, n, t);
    y_ = rowsOf(yStore_, r, nOut_, output.device());
    l_ = rowsOf(lStore_, r, nOut_, output.device());
    ctx.backend().gatherSteps(output, mask, y_);
    ctx.backend().gatherSteps(labels, mask, l_);
    return mask;
  }
  Tensor gradRows(DeviceContext& ctx, const Tensor& grad) {
    Tensor rows = rowsOf(gradStore_, rowsIn_.dim(0), nOut_, grad.device());
    ctx.backend().gatherSteps(grad, Tensor(), rows);
    return rows;
  }

  Tensor inStore_, outStore_, dxStore_, gradStore_, lossGradStore_, yStore_, lStore_;
  Tensor rowsIn_, rowsOut_;  // the last forward pass's input and output as rows (N T, C)
  Tensor y_, l_;             // the real steps of output and labels, (R, nOut)
};

}  // namespace

InputType RnnOutputLayer::resolve(int index, const InputType& input,
                                  const LayerDefaults& defaults) {
  if (input.kind != InputType::Kind::Recurrent)
    throw ConfigError(where(index) + " needs sequences but receives " + input.toString() +
                      "; set the input type with InputType::recurrent(size)");
  FeedForwardLayer::resolve(index, input, defaults);
  validateLoss(where(index), *activation);
  if (activationBackwardNeedsInput(*activation))
    throw ConfigError(where(index) + ": activation " + toString(*activation) +
                      " is not available in RnnOutputLayer; use SOFTMAX, SIGMOID, IDENTITY or "
                      "another activation whose derivative follows from its output");
  return InputType::recurrent(nOut, input.length);
}

std::unique_ptr<layers::RuntimeLayer> RnnOutputLayer::instantiate() const {
  return std::make_unique<RnnOutputRuntime>(*this);
}

void RnnOutputLayer::writeFields(LayerFieldWriter& out) const {
  FeedForwardLayer::writeFields(out);
  writeLoss(out);
}

void RnnOutputLayer::readFields(const LayerFieldReader& in) {
  FeedForwardLayer::readFields(in);
  readLoss(in);
}

}  // namespace dl4cpp
