#pragma once
// FineTuneConfiguration (DL4J's): the training settings TransferLearning::Builder imposes on the
// network it builds, typically a new updater and learning rate for fine-tuning:
//
//   FineTuneConfiguration fineTune = FineTuneConfiguration::Builder()
//       .updater(Nesterovs(5e-5, 0.9))
//       .seed(123)
//       .build();
//
// Every field left unset keeps what the network had. Set fields override, on every layer of the
// new network that is not frozen, what the layer had, and become the defaults of the layers
// added with addLayer (whose own settings still win, as in DL4J). As DL4J's, the layer settings
// (activation, weight init, bias init, updaters, regularisation, dropout, gradient
// normalisation) go to the layers DL4J calls base layers: those with parameters, the loss layer
// and batch normalisation; convolutionMode goes to convolution and subsampling layers; the seed
// is the network's (it initialises every parameter TransferLearning does not keep).
//
// Regularisation follows DL4J's: l1, l2 and weightDecay together replace a layer's weight
// regularisation when any of them is set above 0 (so l2(1e-4) alone removes a layer's l1 and
// weight decay); set to 0, each removes its own term only. l2 and weightDecay exclude each other
// (setting one above 0 unsets the other). The bias terms (l1Bias, l2Bias, weightDecayBias) work
// the same way on the biases. Values are checked where the network's configuration is built, and
// a bad one is a ConfigError naming the layer.
#include <cstdint>
#include <optional>

#include "nn/conf/layers/Layer.h"

namespace dl4cpp {

class FineTuneConfiguration {
 public:
  class Builder;

  // Overrides the set fields on `layer` (a layer of the new network that is not frozen).
  void applyTo(Layer& layer) const;
  // `defaults` with the set fields overriding (the defaults of the new network).
  LayerDefaults applyTo(LayerDefaults defaults) const;
  // The new network's seed: the one set here, else the original's.
  uint64_t seedOr(uint64_t original) const { return seed_.value_or(original); }

 private:
  // One group of regularisation terms: the weights' or the biases'.
  struct Regularization {
    std::optional<double> l1, l2;
    std::optional<WeightDecay> weightDecay;
    // Applies DL4J's replace-or-remove rule to a layer's terms (optional fields) or the
    // defaults' (plain ones).
    template <typename Number, typename Decay>
    void applyTo(Number& l1Value, Number& l2Value, Decay& decayValue) const;
  };

  // The layer settings, onto a Layer or LayerDefaults (which name them alike).
  template <typename Target>
  void applySettings(Target& target) const;

  std::optional<uint64_t> seed_;
  std::optional<Activation> activation_;
  std::optional<WeightInitScheme> weightInit_;
  std::optional<double> biasInit_;
  std::optional<UpdaterParams> updater_, biasUpdater_;
  Regularization weights_, biases_;
  std::optional<double> dropOut_;
  std::optional<GradientNormalization> gradientNormalization_;
  std::optional<double> gradientNormalizationThreshold_;
  std::optional<ConvolutionMode> convolutionMode_;
};

class FineTuneConfiguration::Builder {
 public:
  Builder& seed(uint64_t s) {
    conf_.seed_ = s;
    return *this;
  }
  Builder& activation(Activation a) {
    conf_.activation_ = a;
    return *this;
  }
  Builder& weightInit(const WeightInitScheme& w) {
    conf_.weightInit_ = w;
    return *this;
  }
  Builder& biasInit(double v) {
    conf_.biasInit_ = v;
    return *this;
  }
  Builder& updater(const UpdaterParams& u) {
    conf_.updater_ = u;
    return *this;
  }
  Builder& biasUpdater(const UpdaterParams& u) {
    conf_.biasUpdater_ = u;
    return *this;
  }
  Builder& l1(double v) {
    conf_.weights_.l1 = v;
    return *this;
  }
  Builder& l2(double v) { return setL2(conf_.weights_, v); }
  Builder& weightDecay(double coeff, bool applyLR = true) {
    return setWeightDecay(conf_.weights_, coeff, applyLR);
  }
  Builder& l1Bias(double v) {
    conf_.biases_.l1 = v;
    return *this;
  }
  Builder& l2Bias(double v) { return setL2(conf_.biases_, v); }
  Builder& weightDecayBias(double coeff, bool applyLR = true) {
    return setWeightDecay(conf_.biases_, coeff, applyLR);
  }
  // The retain probability (0: no dropout), as Layer::dropOut.
  Builder& dropOut(double retainProbability) {
    conf_.dropOut_ = retainProbability;
    return *this;
  }
  Builder& gradientNormalization(GradientNormalization g) {
    conf_.gradientNormalization_ = g;
    return *this;
  }
  Builder& gradientNormalizationThreshold(double t) {
    conf_.gradientNormalizationThreshold_ = t;
    return *this;
  }
  Builder& convolutionMode(ConvolutionMode m) {
    conf_.convolutionMode_ = m;
    return *this;
  }
  FineTuneConfiguration build() const { return conf_; }

 private:
  Builder& setL2(Regularization& r, double v) {
    r.l2 = v;
    if (v > 0) r.weightDecay.reset();
    return *this;
  }
  Builder& setWeightDecay(Regularization& r, double coeff, bool applyLR) {
    r.weightDecay = WeightDecay{coeff, applyLR};
    if (coeff > 0) r.l2.reset();
    return *this;
  }

  FineTuneConfiguration conf_;
};

}  // namespace dl4cpp
