#include "nn/conf/TimeStepPreProcessor.h"

#include <fmt/format.h>

#include "nn/backend/ops/RecurrentOps.h"
#include "nn/core/Error.h"
#include "nn/layers/ScratchView.h"

namespace dl4cpp::detail {

namespace {

// `t` (N*T rows or images) as rows of their values.
Tensor asRows(const Tensor& t) { return t.reshape(Shape{t.dim(0), t.numel() / t.dim(0)}); }

}  // namespace

TimeStepPreProcessor::TimeStepPreProcessor(std::unique_ptr<layers::RuntimeLayer> inner,
                                           InputPreProcessor preProcessor,
                                           const InputType& consumed)
    : inner_(std::move(inner)),
      toSteps_(preProcessor == InputPreProcessor::RnnToFeedForward ||
               preProcessor == InputPreProcessor::RnnToCnn),
      consumed_(consumed) {}

Shape TimeStepPreProcessor::consumedShape(const Shape& input, int64_t steps) const {
  if (toSteps_) return consumed_.shape(input[0], input[2]);
  if (steps <= 0 || input[0] % steps != 0)
    throw ShapeError(fmt::format(
        "{} rows or images per time step cannot be sequences of {} steps: the network gave "
        "the layer after them no whole number of sequences",
        input[0], steps));
  return consumed_.shape(input[0] / steps, steps);
}

Shape TimeStepPreProcessor::outputShape(const Shape& input) const {
  return inner_->outputShape(consumedShape(input, consumed_.stepsOf(steps_)));
}

void TimeStepPreProcessor::reorder(DeviceContext& ctx, const Tensor& from, Tensor& to,
                                   bool forward) const {
  // Sequences (N, C, T) to rows (N*T, C) is gatherSteps over every step; back is scatterSteps.
  if (forward == toSteps_) {
    Tensor rows = asRows(to);
    ctx.backend().gatherSteps(from, Tensor(), rows);
  } else {
    ctx.backend().scatterSteps(asRows(from), Tensor(), to);
  }
}

void TimeStepPreProcessor::forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
                                   const ForwardContext& fwd) {
  steps_ = toSteps_ ? input.dim(2) : consumed_.stepsOf(fwd.steps);
  seen_ = layers::scratchView(seenStore_, consumedShape(input.shape(), steps_), ctx.device());
  reorder(ctx, input, seen_, true);
  inner_->forward(ctx, seen_, output, fwd);
}

void TimeStepPreProcessor::backwardInput(DeviceContext& ctx, const Tensor& grad,
                                         Tensor& inputGrad) {
  seenGrad_ = layers::scratchView(seenGradStore_, seen_.shape(), ctx.device());
  inner_->backwardInput(ctx, grad, seenGrad_);
  reorder(ctx, seenGrad_, inputGrad, false);
}

void TimeStepPreProcessor::backward(DeviceContext& ctx, const Tensor& input, const Tensor& grad,
                                    bool params, Tensor* inputGrad) {
  (void)input;
  if (inputGrad == nullptr) {
    inner_->backward(ctx, seen_, grad, params, nullptr);
    return;
  }
  seenGrad_ = layers::scratchView(seenGradStore_, seen_.shape(), ctx.device());
  inner_->backward(ctx, seen_, grad, params, &seenGrad_);
  reorder(ctx, seenGrad_, *inputGrad, false);
}

std::unique_ptr<layers::RuntimeLayer> withPreProcessor(
    InputPreProcessor preProcessor, const InputType& consumed,
    std::unique_ptr<layers::RuntimeLayer> runtime) {
  if (!reordersValues(preProcessor)) return runtime;
  return std::make_unique<TimeStepPreProcessor>(std::move(runtime), preProcessor, consumed);
}

}  // namespace dl4cpp::detail
