#include "nn/transferlearning/FineTuneConfiguration.h"

namespace dl4cpp {

namespace {

template <typename T>
void override(std::optional<T>& field, const std::optional<T>& value) {
  if (value) field = value;
}

template <typename T>
void override(T& field, const std::optional<T>& value) {
  if (value) field = *value;
}

}  // namespace

template <typename Number, typename Decay>
void FineTuneConfiguration::Regularization::applyTo(Number& l1Value, Number& l2Value,
                                                    Decay& decayValue) const {
  const bool replaces =
      l1.value_or(0) > 0 || l2.value_or(0) > 0 || (weightDecay && weightDecay->coeff > 0);
  if (replaces) {
    l1Value = l1.value_or(0);
    l2Value = l2.value_or(0);
    decayValue = weightDecay.value_or(WeightDecay{});
    return;
  }
  override(l1Value, l1);
  override(l2Value, l2);
  override(decayValue, weightDecay);
}

template <typename Target>
void FineTuneConfiguration::applySettings(Target& target) const {
  override(target.activation, activation_);
  override(target.weightInit, weightInit_);
  override(target.biasInit, biasInit_);
  override(target.updater, updater_);
  override(target.biasUpdater, biasUpdater_);
  override(target.dropOut, dropOut_);
  override(target.gradientNormalization, gradientNormalization_);
  override(target.gradientNormalizationThreshold, gradientNormalizationThreshold_);
  weights_.applyTo(target.l1, target.l2, target.weightDecay);
  biases_.applyTo(target.l1Bias, target.l2Bias, target.weightDecayBias);
}

void FineTuneConfiguration::applyTo(Layer& layer) const {
  if (convolutionMode_) layer.setConvolutionMode(*convolutionMode_);
  if (layer.isBaseLayer()) applySettings(layer);
}

LayerDefaults FineTuneConfiguration::applyTo(LayerDefaults defaults) const {
  applySettings(defaults);
  override(defaults.convolutionMode, convolutionMode_);
  return defaults;
}

}  // namespace dl4cpp
