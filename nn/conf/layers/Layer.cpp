#include <dl4cpp/nn/conf/ConfigurationLimits.h>
#include <dl4cpp/nn/conf/layers/Layer.h>

#include <cmath>
#include <numeric>

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

void Layer::inheritDefaults(const LayerDefaults& d) {
  if (!activation) activation = d.activation;
  if (!weightInit) weightInit = d.weightInit;
  if (!updater) updater = d.updater;
  if (!biasUpdater && d.biasUpdater) biasUpdater = d.biasUpdater;
  if (!l2) l2 = d.l2;
  if (!l2Bias) l2Bias = d.l2Bias;
  if (!biasInit) biasInit = d.biasInit;
  if (!dropOut) dropOut = d.dropOut;
}

std::string Layer::where(int index) const {
  std::string s = "layer " + std::to_string(index) + " (" + typeName();
  if (!name.empty()) s += " \"" + name + "\"";
  return s + ")";
}

namespace {
void checkUpdater(const std::string& where, const char* field, const UpdaterParams& u) {
  if (!(u.learningRate >= 0) || !std::isfinite(u.learningRate))
    throw ConfigError(where + ": " + field + " learning rate must be finite and >= 0, got " +
                      std::to_string(u.learningRate));
}
}  // namespace

void Layer::validateCommon(int index) const {
  if (!(*l2 >= 0))
    throw ConfigError(where(index) + ": l2 must be >= 0, got " + std::to_string(*l2));
  if (!(*l2Bias >= 0))
    throw ConfigError(where(index) + ": l2Bias must be >= 0, got " + std::to_string(*l2Bias));
  if (!(*dropOut >= 0 && *dropOut <= 1))
    throw ConfigError(where(index) + ": dropOut is the probability of keeping a value, in [0, 1] " +
                      "(0: no dropout), got " + std::to_string(*dropOut));
  checkUpdater(where(index), "updater", *updater);
  if (biasUpdater) checkUpdater(where(index), "biasUpdater", *biasUpdater);
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
