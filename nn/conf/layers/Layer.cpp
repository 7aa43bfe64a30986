#include "nn/conf/layers/Layer.h"

#include <fmt/format.h>

#include <cmath>
#include <numeric>

#include "nn/conf/ConfigurationLimits.h"
#include "nn/conf/layers/LossOutput.h"

namespace dl4cpp {

int64_t Layer::numParams() const {
  const auto specs = paramSpecs();
  return std::accumulate(specs.begin(), specs.end(), int64_t{0},
                         [](int64_t sum, const ParamSpec& s) { return sum + s.shape.numel(); });
}

int64_t Layer::stateSize() const {
  const auto specs = stateSpecs();
  return std::accumulate(specs.begin(), specs.end(), int64_t{0},
                         [](int64_t sum, const StateSpec& s) { return sum + s.shape.numel(); });
}

bool Layer::isBaseLayer() const {
  return !paramSpecs().empty() || dynamic_cast<const LossOutput*>(this) != nullptr;
}

void Layer::inheritDefaults(const LayerDefaults& d) {
  if (!activation) activation = d.activation;
  if (!weightInit) weightInit = d.weightInit;
  if (!updater) updater = d.updater;
  if (!biasUpdater && d.biasUpdater) biasUpdater = d.biasUpdater;
  if (!l2) l2 = d.l2;
  if (!l2Bias) l2Bias = d.l2Bias;
  if (!biasInit) biasInit = d.biasInit;
  if (!dropOut) dropOut = d.dropOut;
  if (!l1) l1 = d.l1;
  if (!l1Bias) l1Bias = d.l1Bias;
  if (!weightDecay) weightDecay = d.weightDecay;
  if (!weightDecayBias) weightDecayBias = d.weightDecayBias;
  if (!gradientNormalization) gradientNormalization = d.gradientNormalization;
  if (!gradientNormalizationThreshold)
    gradientNormalizationThreshold = d.gradientNormalizationThreshold;
}

RegularizationParams Layer::resolvedRegularization(bool bias) const {
  RegularizationParams r;
  r.l1 = bias ? *l1Bias : *l1;
  r.l2 = bias ? *l2Bias : *l2;
  const WeightDecay& decay = bias ? *weightDecayBias : *weightDecay;
  r.weightDecay = decay.coeff;
  r.weightDecayApplyLR = decay.applyLR;
  return r;
}

std::string Layer::where(int index) const {
  std::string s = "layer " + std::to_string(index) + " (" + typeName();
  if (!name.empty()) s += " \"" + name + "\"";
  return s + ")";
}

namespace {
// ConfigError "<where>: <field> must be <rule>, got <value>" unless `ok`.
void require(bool ok, const std::string& where, const std::string& field, const char* rule,
             double value) {
  if (!ok)
    throw ConfigError(where + ": " + field + " must be " + rule + ", got " +
                      fmt::format("{}", value));
}

bool nonNegative(double v) { return v >= 0 && std::isfinite(v); }
// A decay rate of the kind the updaters use: 1 would stop every average at its start.
bool decayRate(double v) { return v >= 0 && v < 1; }

void checkUpdater(const std::string& where, const char* field, const UpdaterParams& u) {
  const std::string name = field;
  require(nonNegative(u.learningRate), where, name + " learning rate", "finite and >= 0",
          u.learningRate);
  const UpdaterKind k = u.kind;
  if (k == UpdaterKind::ADAM || k == UpdaterKind::ADAMAX || k == UpdaterKind::NADAM ||
      k == UpdaterKind::AMSGRAD) {
    require(decayRate(u.beta1), where, name + " beta1", "in [0, 1)", u.beta1);
    require(decayRate(u.beta2), where, name + " beta2", "in [0, 1)", u.beta2);
  }
  if (k == UpdaterKind::RMSPROP)
    require(decayRate(u.rmsDecay), where, name + " rmsDecay", "in [0, 1)", u.rmsDecay);
  if (k == UpdaterKind::ADADELTA)
    require(decayRate(u.rho), where, name + " rho", "in [0, 1)", u.rho);
  if (k == UpdaterKind::NESTEROVS)
    require(std::isfinite(u.momentum), where, name + " momentum", "finite", u.momentum);
  // DL4J's updaters without a learning rate (AdaDelta, NoOp) take no schedule for it; only
  // Nesterovs has a momentum.
  if (u.learningRateSchedule && !u.hasLearningRate())
    throw ConfigError(where + ": " + name + " " + u.learningRateSchedule->name() +
                      " on the learning rate: this updater has no learning rate");
  if (u.momentumSchedule && k != UpdaterKind::NESTEROVS)
    throw ConfigError(where + ": " + name + " " + u.momentumSchedule->name() +
                      " on the momentum: only Nesterovs has a momentum");
  require(nonNegative(u.epsilon), where, name + " epsilon", "finite and >= 0", u.epsilon);
}
}  // namespace

void Layer::validateCommon(int index) const {
  const std::string at = where(index);
  require(nonNegative(*l2), at, "l2", "finite and >= 0", *l2);
  require(nonNegative(*l2Bias), at, "l2Bias", "finite and >= 0", *l2Bias);
  require(nonNegative(*l1), at, "l1", "finite and >= 0", *l1);
  require(nonNegative(*l1Bias), at, "l1Bias", "finite and >= 0", *l1Bias);
  require(nonNegative(weightDecay->coeff), at, "weightDecay coefficient", "finite and >= 0",
          weightDecay->coeff);
  require(nonNegative(weightDecayBias->coeff), at, "weightDecayBias coefficient", "finite and >= 0",
          weightDecayBias->coeff);
  require(*gradientNormalizationThreshold > 0 && std::isfinite(*gradientNormalizationThreshold), at,
          "gradientNormalizationThreshold", "finite and > 0", *gradientNormalizationThreshold);
  require(*dropOut >= 0 && *dropOut <= 1, at, "dropOut",
          "in [0, 1] (the probability of keeping a value; 0: no dropout)", *dropOut);
  checkUpdater(at, "updater", *updater);
  if (const Distribution* d = weightInit->distribution(); d && !d->problem().empty())
    throw ConfigError(at + ": weightInit " + d->toString() + ": " + d->problem());
  if (biasUpdater) checkUpdater(at, "biasUpdater", *biasUpdater);
}

InputType FeedForwardLayer::resolve(int index, const InputType& input,
                                    const LayerDefaults& defaults) {
  inheritDefaults(defaults);
  const int64_t arriving = input.flatSize();
  if (nIn == 0) nIn = arriving;
  if (nIn != arriving)
    throw ConfigError(where(index) + ": nIn is " + std::to_string(nIn) + " but the previous " +
                      "layer delivers " + input.toString() + " = " + std::to_string(arriving) +
                      " values per example");
  if (nOut <= 0 || nOut > limits::kMaxExtent)
    throw ConfigError(where(index) + ": nOut must be between 1 and " +
                      std::to_string(limits::kMaxExtent) + ", got " + std::to_string(nOut));
  if (!limits::boundedProduct({nIn, nOut}, limits::kMaxParameters))
    throw ConfigError(where(index) + ": nIn " + std::to_string(nIn) + " x nOut " +
                      std::to_string(nOut) + " weights exceed the limit of " +
                      std::to_string(limits::kMaxParameters));
  validateCommon(index);
  return InputType::feedForward(nOut);
}

std::vector<ParamSpec> FeedForwardLayer::paramSpecs() const {
  std::vector<ParamSpec> specs{
      {"W", Shape{nOut, nIn}, false, weightInit, double(nIn), double(nOut)}};
  if (hasBias)
    specs.push_back({"b", Shape{nOut}, true, std::nullopt, 0, 0, float(biasInit.value_or(0))});
  return specs;
}

void FeedForwardLayer::writeFields(LayerFieldWriter& out) const {
  out.integer("nIn", nIn);
  out.integer("nOut", nOut);
  out.boolean("hasBias", hasBias);
}

void FeedForwardLayer::readFields(const LayerFieldReader& in) {
  nIn = in.size("nIn", limits::kMaxValuesPerExample);  // a flattened image's values, say
  nOut = in.size("nOut", limits::kMaxExtent);
  hasBias = in.boolean("hasBias");
}

}  // namespace dl4cpp
