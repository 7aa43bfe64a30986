#include "nn/conf/layers/EmbeddingLayer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "nn/conf/ConfigurationLimits.h"
#include "nn/conf/layers/EmbeddingRuntime.h"
#include "nn/core/Error.h"

namespace dl4cpp {

namespace detail {

EmbeddingRuntime::EmbeddingRuntime(std::string where, int64_t nIn, int64_t nOut, bool hasBias,
                                   bool sequences, int64_t length, Activation activation,
                                   double alpha)
    : where_(std::move(where)),
      nIn_(nIn),
      nOut_(nOut),
      hasBias_(hasBias),
      sequences_(sequences),
      length_(length),
      activation_(activation, static_cast<float>(alpha)) {}

void EmbeddingRuntime::bindParams(const std::vector<Tensor>& params,
                                  const std::vector<Tensor>& grads) {
  w_ = params[0];
  dw_ = grads[0];
  if (hasBias_) {
    b_ = params[1];
    db_ = grads[1];
  }
}

int64_t EmbeddingRuntime::stepsOf(const Shape& input) const {
  const bool ok = sequences_ ? (input.rank() == 2 || (input.rank() == 3 && input[1] == 1))
                             : (input.rank() == 2 && input[1] == 1);
  if (!ok)
    throw ShapeError(fmt::format("{}: input {} is not {}", where_, input.toString(),
                                 sequences_ ? "[N, T] or [N, 1, T] indices" : "[N, 1] indices"));
  const int64_t steps = sequences_ ? input[input.rank() - 1] : 1;
  if (length_ > 0 && steps != length_)
    throw ShapeError(fmt::format("{}: sequences of {} steps, but the layer's input length is {}",
                                 where_, steps, length_));
  return steps;
}

Shape EmbeddingRuntime::outputShape(const Shape& input) const {
  const int64_t steps = stepsOf(input);
  if (!sequences_) return {input[0], nOut_};
  return {input[0], nOut_, steps};
}

int64_t EmbeddingRuntime::indexAt(const Tensor& input, int64_t e, int64_t t, int64_t steps) const {
  const float v = input.data()[e * steps + t];
  if (!(v >= 0.0f) || v >= static_cast<float>(nIn_) || v != std::floor(v))
    throw DataError(fmt::format(
        "{}: index {} at example {}{} is outside the vocabulary: indices must be integers in [0, "
        "{}) (nIn, the vocabulary size, is {})",
        where_, v, e, sequences_ ? fmt::format(", step {}", t) : std::string(), nIn_, nIn_));
  return static_cast<int64_t>(v);
}

void EmbeddingRuntime::forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
                               const ForwardContext& fwd) {
  const int64_t n = input.dim(0), steps = stepsOf(input.shape());
  mask_ = fwd.featuresMask != nullptr && sequences_ ? *fwd.featuresMask : Tensor();
  if (!mask_.empty() && mask_.shape() != Shape{n, steps})
    throw ShapeError(fmt::format("{}: the features mask {} does not match {} sequences of {} steps",
                                 where_, mask_.shape().toString(), n, steps));
  // Every index is read on the host and checked before anything is written.
  const Tensor indices = input.toHost();
  const Tensor hostMask = mask_.toHost();
  index_.assign(static_cast<size_t>(n * steps), -1);
  for (int64_t e = 0; e < n; ++e)
    for (int64_t t = 0; t < steps; ++t)
      if (hostMask.empty() || hostMask.data()[e * steps + t] != 0.0f)
        index_[static_cast<size_t>(e * steps + t)] = indexAt(indices, e, t, steps);
  activation_.forward(ctx, output, fwd.training,
                      [&](Tensor& z) { ctx.backend().embeddingForward(index_, w_, b_, z); });
  // The activation of 0 need not be 0 (SIGMOID): padded steps are zeroed after it.
  if (!mask_.empty()) {
    Tensor sequences = output.reshape(Shape{n, nOut_, steps});
    ctx.backend().maskSteps(sequences, mask_, sequences);
  }
}

void EmbeddingRuntime::backwardActivation(DeviceContext& ctx, const Tensor& output, Tensor& grad) {
  activation_.backward(ctx, output, grad, grad);
}

void EmbeddingRuntime::backwardParams(DeviceContext& ctx, const Tensor& input, const Tensor& grad) {
  (void)input;  // the forward pass kept its checked indices
  ctx.backend().embeddingBackward(index_, grad, dw_, db_);
}

void EmbeddingRuntime::backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) {
  (void)ctx;
  (void)grad;
  // Indices are not differentiable: DL4J's embedding layers pass no gradient back either.
  inputGrad.fill(0.0f);
}

void validateEmbeddingSizes(const std::string& where, int64_t nIn, int64_t nOut) {
  if (nIn <= 0 || nIn > limits::kMaxValuesPerExample)
    throw ConfigError(
        fmt::format("{}: nIn, the vocabulary size, must be set, between 1 and {}; got {}", where,
                    limits::kMaxValuesPerExample, nIn));
  if (nOut <= 0 || nOut > limits::kMaxExtent)
    throw ConfigError(
        fmt::format("{}: nOut must be between 1 and {}, got {}", where, limits::kMaxExtent, nOut));
  if (!limits::boundedProduct({nIn, nOut}, limits::kMaxParameters))
    throw ConfigError(fmt::format("{}: nIn {} x nOut {} weights exceed the limit of {}", where, nIn,
                                  nOut, limits::kMaxParameters));
}

}  // namespace detail

InputType EmbeddingLayer::resolve(int index, const InputType& input,
                                  const LayerDefaults& defaults) {
  inheritDefaults(defaults);
  if (input.kind != InputType::Kind::FeedForward || input.size != 1)
    throw ConfigError(fmt::format(
        "{} takes one class index per example, InputType::feedForward(1), but receives {}",
        where(index), input.toString()));
  detail::validateEmbeddingSizes(where(index), nIn, nOut);
  validateCommon(index);
  where_ = where(index);
  return InputType::feedForward(nOut);
}

std::vector<ParamSpec> EmbeddingLayer::paramSpecs() const {
  std::vector<ParamSpec> specs{
      {"W", Shape{nIn, nOut}, false, weightInit, double(nIn), double(nOut)}};
  if (hasBias)
    specs.push_back({"b", Shape{nOut}, true, std::nullopt, 0, 0, float(biasInit.value_or(0))});
  return specs;
}

std::unique_ptr<layers::RuntimeLayer> EmbeddingLayer::instantiate() const {
  return std::make_unique<detail::EmbeddingRuntime>(where_, nIn, nOut, hasBias, false, 0,
                                                    *activation, leakyReluAlpha);
}

}  // namespace dl4cpp
