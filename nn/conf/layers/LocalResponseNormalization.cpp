#include "nn/conf/layers/LocalResponseNormalization.h"

#include <fmt/format.h>

#include <cmath>

#include "nn/conf/ConfigurationLimits.h"
#include "nn/layers/RuntimeLayer.h"

namespace dl4cpp {

namespace {

// The runtime object. No parameters. Keeps a view of the last forward pass's input (the network's
// buffer, unchanged until the backward pass that follows) and the backend's workspace of the last
// training forward pass, which the backward pass reads.
class LrnRuntime : public layers::RuntimeLayer {
 public:
  explicit LrnRuntime(const LocalResponseNormalization& conf)
      : params_{static_cast<int64_t>(conf.n), static_cast<float>(conf.k),
                static_cast<float>(conf.alpha), static_cast<float>(conf.beta)} {}

  Shape outputShape(const Shape& input) const override { return input; }
  void forward(DeviceContext& ctx, const Tensor& input, Tensor& output,
               const ForwardContext& fwd) override {
    ctx.backend().lrnForward(params_, input, output, fwd.training, workspace_);
    input_ = input;
  }
  void backwardInput(DeviceContext& ctx, const Tensor& grad, Tensor& inputGrad) override {
    ctx.backend().lrnBackward(params_, input_, grad, inputGrad, workspace_);
  }

 private:
  LrnParams params_;
  Tensor input_;
  Tensor workspace_;
};

}  // namespace

InputType LocalResponseNormalization::resolve(int index, const InputType& input,
                                              const LayerDefaults& defaults) {
  inheritDefaults(defaults);
  if (input.kind == InputType::Kind::FeedForward)
    throw ConfigError(where(index) + ": needs image input but receives " + input.toString());
  auto fail = [&](const std::string& problem) { throw ConfigError(where(index) + ": " + problem); };
  if (!(n >= 1 && n <= static_cast<double>(limits::kMaxExtent)) || std::floor(n) != n ||
      std::fmod(n, 2.0) != 1.0)
    fail(
        fmt::format("n (the window's channel count) must be an odd whole number between 1 and {}, "
                    "got {}",
                    limits::kMaxExtent, n));
  // k > 0 keeps the base of the power positive (alpha >= 0 adds a sum of squares).
  if (!(k > 0) || !std::isfinite(k)) fail(fmt::format("k must be finite and > 0, got {}", k));
  if (!(alpha >= 0) || !std::isfinite(alpha))
    fail(fmt::format("alpha must be finite and >= 0, got {}", alpha));
  if (!std::isfinite(beta)) fail(fmt::format("beta must be finite, got {}", beta));
  validateCommon(index);
  return input;
}

std::unique_ptr<layers::RuntimeLayer> LocalResponseNormalization::instantiate() const {
  return std::make_unique<LrnRuntime>(*this);
}

void LocalResponseNormalization::writeFields(LayerFieldWriter& out) const {
  out.number("k", k);
  out.number("n", n);
  out.number("alpha", alpha);
  out.number("beta", beta);
}

void LocalResponseNormalization::readFields(const LayerFieldReader& in) {
  k = in.number("k");
  n = in.number("n");
  alpha = in.number("alpha");
  beta = in.number("beta");
}

}  // namespace dl4cpp