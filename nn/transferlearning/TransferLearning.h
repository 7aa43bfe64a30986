#pragma once
// TransferLearning (DL4J's): a new network made from a trained one, keeping its parameters where
// the architecture allows, typically with the lower layers frozen as a feature extractor and a
// new output layer:
//
//   MultiLayerNetwork tuned = TransferLearning::Builder(pretrained)
//       .fineTuneConfiguration(FineTuneConfiguration::Builder().updater(Adam(1e-3)).build())
//       .setFeatureExtractor(3)            // layers 0..3 frozen
//       .removeOutputLayer()
//       .addLayer(OutputLayer::Builder(LossFunction::MCXENT).nOut(5)
//                     .activation(Activation::SOFTMAX).build())
//       .build();                          // initialised: ready to fit
//
// build() edits the original's (resolved) configuration in DL4J's order: nOutReplace edits
// (ascending layer order), then the removal of the last layers, then the added layers; it applies
// the fine-tune configuration to every layer that is not frozen (FineTuneConfiguration.h) and
// freezes layers 0 to the feature-extractor index (Layer::frozen; layers the original had frozen
// stay frozen). The new configuration is built and validated as any other, so an edit that breaks
// the shapes is a ConfigError naming the layer. The new network lives on the original's device
// with its thread count. It holds the original's parameters and layer state (running statistics)
// for every kept layer whose parameter and state shapes did not change and that no nOutReplace
// re-initialised; every other parameter is initialised from the seed (the fine-tune's, else the
// original's). Updater state and counters start afresh. The original is not modified.
//
// Errors (ConfigError, naming the problem): an original that is not initialised; a
// feature-extractor index outside the network; nOutReplace on a layer that has no nOut or that is
// removed; removeLayersFromOutput called twice or beyond the network; an edited network with no
// layers; a frozen layer whose parameters would be initialised afresh (an added layer, or one an
// nOutReplace edits: a frozen layer keeps trained parameters); a configuration the edits made
// invalid.
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "nn/multilayer/MultiLayerNetwork.h"
#include "nn/transferlearning/FineTuneConfiguration.h"

namespace dl4cpp {

class TransferLearning {
 public:
  class Builder;
};

class TransferLearning::Builder {
 public:
  // `original` must be initialised and must outlive build().
  explicit Builder(const MultiLayerNetwork& original);

  Builder& fineTuneConfiguration(const FineTuneConfiguration& fineTune);
  // Freezes layers 0 to `layer` of the edited network (the original's indices, which edits at the
  // output do not move).
  Builder& setFeatureExtractor(int layer);
  // Sets layer `layer`'s nOut (a dense, output or convolution layer) and re-initialises it with
  // `scheme`. The next layer with an nIn (past parameterless layers and batch normalisation,
  // whose size follows) takes the new size and is re-initialised with `schemeNext` (`scheme` when
  // not given).
  Builder& nOutReplace(int layer, int64_t nOut, const WeightInitScheme& scheme);
  Builder& nOutReplace(int layer, int64_t nOut, const WeightInitScheme& scheme,
                       const WeightInitScheme& schemeNext);
  // Removes the last layer (removeLayersFromOutput(1)).
  Builder& removeOutputLayer();
  // Removes the last `count` layers; at most once, as in DL4J.
  Builder& removeLayersFromOutput(int count);
  // Appends a layer after the removals, in call order; its unset fields take the original's
  // defaults with the fine-tune configuration's overrides.
  Builder& addLayer(const Layer& layer);

  MultiLayerNetwork build() const;

 private:
  struct NOutEdit {
    int64_t nOut = 0;
    WeightInitScheme scheme, schemeNext;
  };

  int originalLayers() const;
  // The edited, unresolved layer list (fine-tune and frozen flags applied) and, per kept layer,
  // whether an nOutReplace re-initialises it.
  std::vector<std::shared_ptr<Layer>> editedLayers(std::vector<bool>& reinitialised) const;

  const MultiLayerNetwork* original_;
  std::optional<FineTuneConfiguration> fineTune_;
  int frozenTill_ = -1;
  std::map<int, NOutEdit> nOutEdits_;  // by layer: applied in ascending order
  std::optional<int> removed_;
  std::vector<std::shared_ptr<const Layer>> added_;
};

}  // namespace dl4cpp
