#pragma once
// Layer configurations (DL4J's org.deeplearning4j.nn.conf.layers): plain values describing a
// layer, built with DL4J-style builders, e.g.
//   ConvolutionLayer::Builder(5, 5).nIn(1).stride(1, 1).nOut(20).build()
// Every field left unset takes the value given to NeuralNetConfiguration::Builder (as in DL4J).
// NeuralNetConfiguration's list builder calls resolve() in order; resolve() fills those defaults
// and nIn, validates everything, and returns what the layer outputs.
//
// A layer type describes itself completely in its own two files, X.h (its fields and builder, the
// public face) and X.cpp in this folder: how its fields read and write JSON (writeFields /
// readFields), its parameters and state (paramSpecs, stateSpecs) and its runtime object
// (instantiate; the runtime class is private to X.cpp). The LayerRegistry (nn/conf/LayerRegistry.h)
// maps its typeName() to a factory, which is how JSON and model files find it again; a layer type
// user code registers there round-trips like a built-in one. docs/adding-a-layer.md walks through
// adding one.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nn/conf/Enums.h"
#include "nn/conf/InputType.h"
#include "nn/conf/LayerFields.h"
#include "nn/conf/WeightInitScheme.h"
#include "nn/conf/layers/LayerSpecs.h"
#include "nn/updaters/Updaters.h"
#include "nn/updaters/WeightDecay.h"

namespace dl4cpp {

namespace layers {
class RuntimeLayer;
}  // namespace layers

// The network-wide defaults set on NeuralNetConfiguration::Builder (DL4J's defaults).
struct LayerDefaults {
  Activation activation = Activation::SIGMOID;
  WeightInitScheme weightInit = WeightInit::XAVIER;
  UpdaterParams updater = Sgd(1e-3);
  std::optional<UpdaterParams> biasUpdater;
  double l2 = 0;
  double l2Bias = 0;
  double biasInit = 0;
  double dropOut = 0;  // DL4J's dropOut(p) on every layer's input: p the retain probability, 0 none
  ConvolutionMode convolutionMode = ConvolutionMode::Truncate;
  // Regularisation besides l2, and gradient normalisation (DL4J's defaults: none; threshold 1).
  double l1 = 0;
  double l1Bias = 0;
  WeightDecay weightDecay;
  WeightDecay weightDecayBias;
  GradientNormalization gradientNormalization = GradientNormalization::None;
  double gradientNormalizationThreshold = 1.0;
};

class Layer {
 public:
  virtual ~Layer() = default;
  virtual std::shared_ptr<Layer> clone() const = 0;
  // The name JSON and model files know the type by (the LayerRegistry's key).
  virtual std::string typeName() const = 0;
  // True when the layer consumes images (N, C, H, W); false for rows (N, size).
  virtual bool consumesImages() const = 0;
  // True for a layer that takes rows and images alike (batch normalisation, dropout): it gets
  // what the previous layer delivers, flat images as images, and consumesImages() is not asked.
  virtual bool acceptsRowsOrImages() const { return false; }
  // True for a layer that consumes sequences (N, C, T) (InputType::Recurrent): recurrent layers,
  // RnnOutputLayer, LastTimeStep. Such a layer given anything else, or another layer given
  // sequences, is a ConfigError when the configuration is built.
  virtual bool consumesSequences() const { return false; }
  // True for a layer that takes sequences as they are besides its usual input (pooling over time,
  // an embedding of index sequences): given sequences it gets them, given anything else it gets
  // what consumesImages() asks for.
  virtual bool acceptsSequences() const { return consumesSequences(); }
  // Takes defaults, infers nIn from `input`, validates; returns the output type. Errors are
  // ConfigError naming the layer index (`index`), the field and the bad value.
  virtual InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) = 0;
  // The runtime object MultiLayerNetwork runs (of the resolved layer).
  virtual std::unique_ptr<layers::RuntimeLayer> instantiate() const = 0;

  // Learned parameters and non-learned state of the resolved layer, in buffer order.
  virtual std::vector<ParamSpec> paramSpecs() const { return {}; }
  virtual std::vector<StateSpec> stateSpecs() const { return {}; }
  // Values in paramSpecs() and stateSpecs().
  int64_t numParams() const;
  int64_t stateSize() const;

  // The fields this type adds to the common ones, written after them in the layer's JSON object;
  // readFields() reads what writeFields() wrote (into a default-constructed layer).
  virtual void writeFields(LayerFieldWriter& out) const { (void)out; }
  virtual void readFields(const LayerFieldReader& in) { (void)in; }

  // What code that edits configurations without knowing their types (TransferLearning,
  // FineTuneConfiguration) asks of a layer; the defaults suit a layer without such fields.
  //
  // The nIn and nOut fields of a layer that has both (dense, output, convolution): the sizes
  // TransferLearning's nOutReplace edits. nullopt by default.
  struct SizeFields {
    int64_t* nIn;
    int64_t* nOut;
  };
  virtual std::optional<SizeFields> nInOut() { return std::nullopt; }
  // Sets the sizes resolve() infers from the input (nIn; batch normalisation's nOut, its channel
  // count) back to 0, "infer", so that the next resolve() takes them from a changed input. The
  // default has none.
  virtual void clearInferredSizes() {}
  // A layer whose output size follows a ConvolutionMode (convolution, subsampling) takes `mode` as
  // its own; the default has none and ignores it.
  virtual void setConvolutionMode(ConvolutionMode mode) { (void)mode; }
  // Whether this is what DL4J calls a base layer, to which a FineTuneConfiguration's layer
  // settings (activation, weight init, updaters, regularisation, dropout, gradient normalisation)
  // apply. By default a layer with parameters or a loss (LossOutput); batch normalisation also
  // says so when its gamma and beta are locked.
  virtual bool isBaseLayer() const;

  std::string name;
  std::optional<Activation> activation;
  double leakyReluAlpha = 0.01;  // LEAKYRELU's negative slope (DL4J's default)
  std::optional<WeightInitScheme> weightInit;
  std::optional<UpdaterParams> updater;
  std::optional<UpdaterParams> biasUpdater;
  std::optional<double> l2;
  std::optional<double> l2Bias;
  std::optional<double> biasInit;
  // DL4J's dropOut(p): inverted dropout on this layer's input in training, p the probability of
  // keeping a value (kept values are scaled by 1/p); 0 (or 1) for none.
  std::optional<double> dropOut;
  std::optional<double> l1;
  std::optional<double> l1Bias;
  std::optional<WeightDecay> weightDecay;
  std::optional<WeightDecay> weightDecayBias;
  std::optional<GradientNormalization> gradientNormalization;
  std::optional<double> gradientNormalizationThreshold;
  // DL4J's FrozenLayer (what TransferLearning's setFeatureExtractor makes of layers 0 to k): the
  // layer's parameters and state never change. It runs in inference mode in every pass (no
  // dropout; batch normalisation uses and keeps its running statistics), its parameter gradients
  // are not computed, and it has no updater state, regularisation or gradient normalisation.
  // Frozen layers must be the network's first layers (the list builder checks), so no gradient
  // ever has to pass through one: the backward pass stops at the lowest trainable layer.
  // A flag rather than DL4J's wrapper type, so a frozen layer keeps its own type (and everything
  // that asks for it: nIn inference, the loss of the last layer, the backends' plans).
  bool frozen = false;

  // Resolved values (valid after resolve()).
  Activation resolvedActivation() const { return *activation; }
  const UpdaterParams& resolvedBiasUpdater() const { return biasUpdater ? *biasUpdater : *updater; }
  // The regularisation of the layer's weights, or of its biases.
  RegularizationParams resolvedRegularization(bool bias) const;

 protected:
  void inheritDefaults(const LayerDefaults& d);
  // "layer 2 (ConvolutionLayer \"conv2\")": the prefix of every configuration error.
  std::string where(int index) const;
  // Checks the inherited common fields (regularisation, gradient normalisation, updaters, a
  // weight-init distribution's parameters); call after inheritDefaults().
  void validateCommon(int index) const;
};

// Layers with nIn/nOut (dense, output).
class FeedForwardLayer : public Layer {
 public:
  int64_t nIn = 0;   // 0: inferred from the input type
  int64_t nOut = 0;  // required
  bool hasBias = true;

  bool consumesImages() const override { return false; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  // W (nOut, nIn) with fans nIn and nOut, then b (nOut).
  std::vector<ParamSpec> paramSpecs() const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
  std::optional<SizeFields> nInOut() override { return SizeFields{&nIn, &nOut}; }
  void clearInferredSizes() override { nIn = 0; }
};

// The builder methods every layer has. Derived: the concrete builder; Conf: the layer it builds.
template <typename Derived, typename Conf>
class LayerBuilder {
 public:
  Derived& name(const std::string& n) {
    return set([&] { conf_.name = n; });
  }
  Derived& activation(Activation a) {
    return set([&] { conf_.activation = a; });
  }
  Derived& leakyReluAlpha(double alpha) {
    return set([&] { conf_.leakyReluAlpha = alpha; });
  }
  // A WeightInit scheme or a distribution: .weightInit(NormalDistribution(0, 0.01)).
  Derived& weightInit(const WeightInitScheme& w) {
    return set([&] { conf_.weightInit = w; });
  }
  Derived& updater(const UpdaterParams& u) {
    return set([&] { conf_.updater = u; });
  }
  Derived& biasUpdater(const UpdaterParams& u) {
    return set([&] { conf_.biasUpdater = u; });
  }
  Derived& l2(double v) {
    return set([&] { conf_.l2 = v; });
  }
  Derived& l2Bias(double v) {
    return set([&] { conf_.l2Bias = v; });
  }
  Derived& biasInit(double v) {
    return set([&] { conf_.biasInit = v; });
  }
  Derived& dropOut(double retainProbability) {
    return set([&] { conf_.dropOut = retainProbability; });
  }
  Derived& l1(double v) {
    return set([&] { conf_.l1 = v; });
  }
  Derived& l1Bias(double v) {
    return set([&] { conf_.l1Bias = v; });
  }
  Derived& weightDecay(double coeff, bool applyLR = true) {
    return set([&] { conf_.weightDecay = WeightDecay{coeff, applyLR}; });
  }
  Derived& weightDecayBias(double coeff, bool applyLR = true) {
    return set([&] { conf_.weightDecayBias = WeightDecay{coeff, applyLR}; });
  }
  Derived& gradientNormalization(GradientNormalization g) {
    return set([&] { conf_.gradientNormalization = g; });
  }
  Derived& gradientNormalizationThreshold(double t) {
    return set([&] { conf_.gradientNormalizationThreshold = t; });
  }
  Conf build() const { return conf_; }

 protected:
  template <typename F>
  Derived& set(F&& f) {
    f();
    return static_cast<Derived&>(*this);
  }
  Conf conf_;
};

template <typename Derived, typename Conf>
class FeedForwardLayerBuilder : public LayerBuilder<Derived, Conf> {
 public:
  Derived& nIn(int64_t n) {
    return this->set([&] { this->conf_.nIn = n; });
  }
  Derived& nOut(int64_t n) {
    return this->set([&] { this->conf_.nOut = n; });
  }
  Derived& hasBias(bool b) {
    return this->set([&] { this->conf_.hasBias = b; });
  }
};

}  // namespace dl4cpp
