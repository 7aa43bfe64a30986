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
#include <concepts>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nn/graph/ComputationGraph.h"
#include "nn/multilayer/MultiLayerNetwork.h"
#include "nn/transferlearning/FineTuneConfiguration.h"

namespace dl4cpp {

class TransferLearning {
 public:
  class Builder;
  class GraphBuilder;
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

// TransferLearning::GraphBuilder (DL4J's): the same for a ComputationGraph, vertices named:
//
//   ComputationGraph tuned = TransferLearning::GraphBuilder(pretrained)
//       .fineTuneConfiguration(FineTuneConfiguration::Builder().updater(Adam(1e-3)).build())
//       .setFeatureExtractor("pool")           // "pool" and everything it reads: frozen
//       .removeVertexAndConnections("out")
//       .addLayer("newOut", OutputLayer::Builder(LossFunction::MCXENT).nOut(5)
//                               .activation(Activation::SOFTMAX).build(), "pool")
//       .setOutputs("newOut")
//       .build();                              // initialised: ready to fit
//
// The edits apply in call order to the original's (resolved) graph: removeVertexAndConnections
// drops a vertex, its name from every vertex that read it and from the outputs (a vertex left
// without inputs is then a ConfigError at build()); removeVertexKeepConnections drops the vertex
// only, so a vertex added under the same name takes its place; addLayer and addVertex add as
// ComputationGraphConfiguration::GraphBuilder does (a layer given several inputs reads them
// merged); nOutReplace sets a layer's nOut, re-initialises it with `scheme`, and every layer
// reading it (through vertices, parameterless layers and batch normalisation, whose sizes follow)
// takes the new size and is re-initialised with `schemeNext`; setOutputs replaces the outputs.
// build() then freezes the feature-extractor vertices and every vertex they read, directly or not
// (layers the original had frozen stay frozen), applies the fine-tune configuration to every layer
// not frozen, and builds the graph through the graph builder, so an edit that breaks the shapes is
// a ConfigError naming the vertex. Parameters and layer state carry over, as for networks, for
// every original layer vertex kept whose shapes did not change and that no nOutReplace
// re-initialised; the rest start from the seed (the fine-tune's, else the original's). Updater
// state and counters start afresh; the original is not modified.
//
// Errors (ConfigError naming the vertex): an original that is not initialised; a name that is no
// vertex of the graph as edited so far (removing, nOutReplace, setFeatureExtractor at build());
// nOutReplace on a vertex that has no nOut; a frozen layer whose parameters would be initialised
// afresh; a configuration the edits made invalid.
class TransferLearning::GraphBuilder {
 public:
  // `original` must be initialised and must outlive build().
  explicit GraphBuilder(const ComputationGraph& original);

  GraphBuilder& fineTuneConfiguration(const FineTuneConfiguration& fineTune);
  template <typename... Names>
  requires(std::convertible_to<const Names&, std::string>&&...)
      GraphBuilder& setFeatureExtractor(const Names&... names) {
    return setFeatureExtractor(std::vector<std::string>{std::string(names)...});
  }
  GraphBuilder& setFeatureExtractor(const std::vector<std::string>& names);
  GraphBuilder& nOutReplace(const std::string& name, int64_t nOut, const WeightInitScheme& scheme);
  GraphBuilder& nOutReplace(const std::string& name, int64_t nOut, const WeightInitScheme& scheme,
                            const WeightInitScheme& schemeNext);
  GraphBuilder& removeVertexAndConnections(const std::string& name);
  GraphBuilder& removeVertexKeepConnections(const std::string& name);
  template <typename... Names>
  requires(std::convertible_to<const Names&, std::string>&&...)
      GraphBuilder& addLayer(const std::string& name, const Layer& layer, const Names&... inputs) {
    return addLayer(name, layer, std::vector<std::string>{std::string(inputs)...});
  }
  GraphBuilder& addLayer(const std::string& name, const Layer& layer,
                         const std::vector<std::string>& inputs);
  template <typename... Names>
  requires(std::convertible_to<const Names&, std::string>&&...) GraphBuilder& addVertex(
      const std::string& name, const GraphVertex& vertex, const Names&... inputs) {
    return addVertex(name, vertex, std::vector<std::string>{std::string(inputs)...});
  }
  GraphBuilder& addVertex(const std::string& name, const GraphVertex& vertex,
                          const std::vector<std::string>& inputs);
  template <typename... Names>
  requires(std::convertible_to<const Names&, std::string>&&...)
      GraphBuilder& setOutputs(const Names&... names) {
    return setOutputs(std::vector<std::string>{std::string(names)...});
  }
  GraphBuilder& setOutputs(const std::vector<std::string>& names);

  ComputationGraph build() const;

 private:
  // One vertex of the graph as edited.
  struct Entry {
    std::string name;
    std::shared_ptr<Layer> layer;         // a layer vertex, or null
    std::shared_ptr<GraphVertex> vertex;  // another vertex, or null
    std::vector<std::string> inputs;
    bool original = false;       // the original's vertex (its parameters may carry)
    bool reinitialised = false;  // nOutReplace re-initialises it
  };
  Entry* find(const std::string& name);
  Entry& require(const std::string& name, const char* method);

  const ComputationGraph* original_;
  std::optional<FineTuneConfiguration> fineTune_;
  std::vector<std::string> featureExtractor_;
  std::vector<Entry> entries_;
  std::vector<std::string> outputs_;
};

}  // namespace dl4cpp
