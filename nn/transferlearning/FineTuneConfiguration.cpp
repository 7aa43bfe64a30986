#include <dl4cpp/nn/conf/layers/BatchNormalization.h>
#include <dl4cpp/nn/conf/layers/ConvolutionLayer.h>
#include <dl4cpp/nn/conf/layers/LossOutput.h>
#include <dl4cpp/nn/conf/layers/SubsamplingLayer.h>
#include <dl4cpp/nn/transferlearning/FineTuneConfiguration.h>

namespace dl4cpp {

namespace {

// DL4J's BaseLayer among this library's layers: the ones the layer settings apply to.
bool isBaseLayer(const Layer& layer) {
  return !layer.paramSpecs().empty() || dynamic_cast<const LossOutput*>(&layer) != nullptr ||
         dynamic_cast<const BatchNormalization*>(&layer) != nullptr;
}

template <typename T>
void override(std::optional<T>& field, const std::optional<T>& value) {
  if (value) field = value;
}

template <typename T>
void override(T& field, const std::optional<T>& value) {
  if (value) field = *value;
}

}  // namespace

void FineTuneConfiguration::Regularization::applyTo(double& l1Value, double& l2Value,
                                                    WeightDecay& decayValue) const {
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

void FineTuneConfiguration::applyTo(Layer& layer) const {
  if (convolutionMode_) {
    if (auto* convolution = dynamic_cast<ConvolutionLayer*>(&layer))
      convolution->convolutionMode = convolutionMode_;
    if (auto* subsampling = dynamic_cast<SubsamplingLayer*>(&layer))
      subsampling->convolutionMode = convolutionMode_;
  }
  if (!isBaseLayer(layer)) return;
  override(layer.activation, activation_);
  override(layer.weightInit, weightInit_);
  override(layer.biasInit, biasInit_);
  override(layer.updater, updater_);
  override(layer.biasUpdater, biasUpdater_);
  override(layer.dropOut, dropOut_);
  override(layer.gradientNormalization, gradientNormalization_);
  override(layer.gradientNormalizationThreshold, gradientNormalizationThreshold_);
  // The layer is resolved (every field set); value_or only guards a layer that is not.
  double l1 = layer.l1.value_or(0), l2 = layer.l2.value_or(0);
  WeightDecay decay = layer.weightDecay.value_or(WeightDecay{});
  weights_.applyTo(l1, l2, decay);
  layer.l1 = l1;
  layer.l2 = l2;
  layer.weightDecay = decay;
  double l1Bias = layer.l1Bias.value_or(0), l2Bias = layer.l2Bias.value_or(0);
  WeightDecay decayBias = layer.weightDecayBias.value_or(WeightDecay{});
  biases_.applyTo(l1Bias, l2Bias, decayBias);
  layer.l1Bias = l1Bias;
  layer.l2Bias = l2Bias;
  layer.weightDecayBias = decayBias;
}

LayerDefaults FineTuneConfiguration::applyTo(LayerDefaults defaults) const {
  override(defaults.activation, activation_);
  override(defaults.weightInit, weightInit_);
  override(defaults.biasInit, biasInit_);
  override(defaults.updater, updater_);
  override(defaults.biasUpdater, biasUpdater_);
  override(defaults.dropOut, dropOut_);
  override(defaults.gradientNormalization, gradientNormalization_);
  override(defaults.gradientNormalizationThreshold, gradientNormalizationThreshold_);
  override(defaults.convolutionMode, convolutionMode_);
  weights_.applyTo(defaults.l1, defaults.l2, defaults.weightDecay);
  biases_.applyTo(defaults.l1Bias, defaults.l2Bias, defaults.weightDecayBias);
  return defaults;
}

}  // namespace dl4cpp
