#pragma once
// NeuralNetConfiguration::Builder -> .list() -> .layer(...)... -> .setInputType(...) -> .build():
// DL4J's way of describing a MultiLayerNetwork. build() resolves every layer in order (defaults,
// nIn inference, validation, reshapes between image and flat data, the size limits of
// ConfigurationLimits.h) and throws ConfigError naming the layer index and the bad value; a
// MultiLayerConfiguration is therefore always valid.
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "nn/conf/layers/Layer.h"

namespace dl4cpp {

class GraphBuilder;

// DL4J's RnnToCnnPreProcessor(inputHeight, inputWidth, numChannels): each time step of sequences
// of height*width*channels features is an image (video frames, say), which convolutional layers
// then process as a batch of N*T images.
struct RnnToCnnPreProcessor {
  int64_t inputHeight = 0, inputWidth = 0, numChannels = 0;
};

struct MultiLayerConfiguration {
  uint64_t seed = 0;
  LayerDefaults defaults;
  std::vector<std::shared_ptr<const Layer>> layers;  // resolved
  std::vector<InputType> layerInputTypes;            // what each layer consumes
  std::vector<InputPreProcessor> preProcessors;      // applied before each layer
  std::vector<InputType> layerOutputTypes;           // what each layer produces
  InputType inputType;                               // what the network consumes
  InputType outputType;
  // Standard or truncated back-propagation through time (DL4J's backpropType, tbpttFwdLength and
  // tbpttBackLength; DL4J's defaults). The lengths matter only for TruncatedBPTT.
  BackpropType backpropType = BackpropType::Standard;
  int64_t tbpttFwdLength = 20;
  int64_t tbpttBackLength = 20;

  // A table of layers, types, shapes and parameter counts.
  std::string summary() const;

  // Human-readable JSON holding every field (DL4J's toJson()/fromJson()): seed, the builder's
  // defaults, the input type and each resolved layer with its preprocessor and input/output
  // types. fromJson() rebuilds through the list builder, so a parsed configuration is validated
  // exactly as a built one, and checks that the derived fields it stores agree. Malformed JSON,
  // missing fields, wrong types, unknown enum names and sizes beyond nn/conf/ConfigurationLimits.h
  // are ConfigError naming the JSON path ("$.layers[2].kernel[0]"); so is JSON larger than 16 MiB
  // or nested more than 64 levels deep (the text may come from an untrusted file).
  std::string toJson() const;
  static MultiLayerConfiguration fromJson(const std::string& text);
};

// Equal when every field is (compares the JSON forms, which hold every field).
bool operator==(const MultiLayerConfiguration& a, const MultiLayerConfiguration& b);

class NeuralNetConfiguration {
 public:
  class ListBuilder;

  class Builder {
   public:
    Builder& seed(uint64_t s) {
      seed_ = s;
      return *this;
    }
    Builder& activation(Activation a) {
      defaults_.activation = a;
      return *this;
    }
    // A WeightInit scheme or a distribution: .weightInit(NormalDistribution(0, 0.01)).
    Builder& weightInit(const WeightInitScheme& w) {
      defaults_.weightInit = w;
      return *this;
    }
    Builder& updater(const UpdaterParams& u) {
      defaults_.updater = u;
      return *this;
    }
    Builder& biasUpdater(const UpdaterParams& u) {
      defaults_.biasUpdater = u;
      return *this;
    }
    Builder& l2(double v) {
      defaults_.l2 = v;
      return *this;
    }
    Builder& l2Bias(double v) {
      defaults_.l2Bias = v;
      return *this;
    }
    Builder& biasInit(double v) {
      defaults_.biasInit = v;
      return *this;
    }
    // Dropout on every layer's input (Layer::dropOut), unless a layer sets its own.
    Builder& dropOut(double retainProbability) {
      defaults_.dropOut = retainProbability;
      return *this;
    }
    Builder& convolutionMode(ConvolutionMode m) {
      defaults_.convolutionMode = m;
      return *this;
    }
    Builder& l1(double v) {
      defaults_.l1 = v;
      return *this;
    }
    Builder& l1Bias(double v) {
      defaults_.l1Bias = v;
      return *this;
    }
    // DL4J's WeightDecay(coeff, applyLR), decoupled: see nn/updaters/WeightDecay.h.
    Builder& weightDecay(double coeff, bool applyLR = true) {
      defaults_.weightDecay = WeightDecay{coeff, applyLR};
      return *this;
    }
    Builder& weightDecayBias(double coeff, bool applyLR = true) {
      defaults_.weightDecayBias = WeightDecay{coeff, applyLR};
      return *this;
    }
    Builder& gradientNormalization(GradientNormalization g) {
      defaults_.gradientNormalization = g;
      return *this;
    }
    Builder& gradientNormalizationThreshold(double t) {
      defaults_.gradientNormalizationThreshold = t;
      return *this;
    }
    ListBuilder list() const;
    // A graph of layers and vertices instead of a list (DL4J's graphBuilder()): see
    // nn/conf/graph/ComputationGraphConfiguration.h, which defines the builder it returns.
    GraphBuilder graphBuilder() const;

   private:
    uint64_t seed_ = 0;
    LayerDefaults defaults_;
  };

  class ListBuilder {
   public:
    ListBuilder(uint64_t seed, LayerDefaults defaults)
        : seed_(seed), defaults_(std::move(defaults)) {}
    // Appends a layer (copied).
    ListBuilder& layer(const Layer& layer);
    // Sets layer `index` (DL4J's .layer(0, ...)); indices must end up contiguous from 0.
    ListBuilder& layer(int index, const Layer& layer);
    ListBuilder& setInputType(const InputType& type) {
      inputType_ = type;
      return *this;
    }
    // Truncated back-propagation through time (DL4J's names; BackpropType in Enums.h): segments
    // of tBPTTForwardLength steps, back-propagated through their last tBPTTBackwardLength steps
    // (both 20 by default, at most the forward length; build() checks).
    ListBuilder& backpropType(BackpropType type) {
      backpropType_ = type;
      return *this;
    }
    ListBuilder& tBPTTForwardLength(int64_t steps) {
      tbpttFwdLength_ = steps;
      return *this;
    }
    ListBuilder& tBPTTBackwardLength(int64_t steps) {
      tbpttBackLength_ = steps;
      return *this;
    }
    // Both lengths at once (DL4J's tBPTTLength).
    ListBuilder& tBPTTLength(int64_t steps) {
      tbpttFwdLength_ = tbpttBackLength_ = steps;
      return *this;
    }
    // DL4J's inputPreProcessor(layer, new RnnToCnnPreProcessor(h, w, c)): layer `layer` receives
    // each time step of its input sequences as an image. The other preprocessors are inserted
    // where they are needed. build() checks that the layer receives sequences of h*w*c features.
    ListBuilder& inputPreProcessor(int layer, const RnnToCnnPreProcessor& preProcessor);
    MultiLayerConfiguration build() const;

   private:
    uint64_t seed_;
    LayerDefaults defaults_;
    std::vector<std::shared_ptr<Layer>> layers_;
    std::vector<std::pair<int, RnnToCnnPreProcessor>> rnnToCnn_;
    std::optional<InputType> inputType_;
    BackpropType backpropType_ = BackpropType::Standard;
    int64_t tbpttFwdLength_ = 20;
    int64_t tbpttBackLength_ = 20;
  };
};

}  // namespace dl4cpp
