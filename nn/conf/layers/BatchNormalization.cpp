#include <dl4cpp/nn/conf/ConfigurationLimits.h>
#include <dl4cpp/nn/conf/layers/BatchNormalization.h>
#include <dl4cpp/nn/layers/BatchNormalization.h>
#include <fmt/format.h>

#include <cmath>

namespace dl4cpp {

InputType BatchNormalization::resolve(int index, const InputType& input,
                                      const LayerDefaults& defaults) {
  inheritDefaults(defaults);
  const int64_t channels = input.kind == InputType::Kind::FeedForward ? input.size : input.channels;
  if (nOut != 0 && nOut != channels)
    throw ConfigError(fmt::format(
        "{}: nOut is {} but the input {} has {} {}", where(index), nOut, input.toString(), channels,
        input.kind == InputType::Kind::FeedForward ? "features" : "channels"));
  nOut = channels;
  if (!(decay >= 0 && decay <= 1))
    throw ConfigError(fmt::format("{}: decay must be in [0, 1], got {}", where(index), decay));
  if (!(eps > 0) || !std::isfinite(eps))
    throw ConfigError(fmt::format("{}: eps must be finite and > 0, got {}", where(index), eps));
  if (!std::isfinite(gamma) || !std::isfinite(beta))
    throw ConfigError(
        fmt::format("{}: gamma and beta must be finite, got {} and {}", where(index), gamma, beta));
  validateCommon(index);
  return input;
}

std::vector<ParamSpec> BatchNormalization::paramSpecs() const {
  if (lockGammaBeta) return {};
  ParamSpec g{"gamma", Shape{nOut}, false, std::nullopt, 0, 0, static_cast<float>(gamma)};
  ParamSpec b{"beta", Shape{nOut}, false, std::nullopt, 0, 0, static_cast<float>(beta)};
  g.regularized = b.regularized = false;
  return {g, b};
}

std::vector<StateSpec> BatchNormalization::stateSpecs() const {
  return {{"runningStats", Shape{2, nOut}, 0.0f, StateCombine::PooledMeanVariance, 1.0f}};
}

std::unique_ptr<layers::RuntimeLayer> BatchNormalization::instantiate() const {
  return std::make_unique<layers::BatchNormalization>(*this);
}

void BatchNormalization::writeFields(LayerFieldWriter& out) const {
  out.number("decay", decay);
  out.number("eps", eps);
  out.number("gamma", gamma);
  out.number("beta", beta);
  out.boolean("lockGammaBeta", lockGammaBeta);
  out.integer("nOut", nOut);
}

void BatchNormalization::readFields(const LayerFieldReader& in) {
  decay = in.number("decay");
  eps = in.number("eps");
  gamma = in.number("gamma");
  beta = in.number("beta");
  lockGammaBeta = in.boolean("lockGammaBeta");
  nOut = in.size("nOut", limits::kMaxValuesPerExample);
}

}  // namespace dl4cpp
