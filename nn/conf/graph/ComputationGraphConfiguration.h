#pragma once
// ComputationGraphConfiguration: DL4J's description of a ComputationGraph, a network whose layers
// and vertices form a directed acyclic graph (residual blocks, Inception's branches, several
// inputs or outputs).
//
//   ComputationGraphConfiguration conf = NeuralNetConfiguration::Builder()
//       .seed(42).updater(Adam(1e-3))
//       .graphBuilder()
//       .addInputs("in")
//       .setInputTypes(InputType::feedForward(4))
//       .addLayer("dense", DenseLayer::Builder().nOut(8).activation(Activation::TANH).build(),
//       "in") .addLayer("skip", DenseLayer::Builder().nOut(8).activation(Activation::TANH).build(),
//       "dense") .addVertex("add", ElementWiseVertex(ElementWiseVertex::Op::Add), "dense", "skip")
//       .addLayer("out", OutputLayer::Builder(LossFunction::MCXENT).nOut(3)
//                            .activation(Activation::SOFTMAX).build(), "add")
//       .setOutputs("out")
//       .build();
//
// build() checks the graph and resolves every vertex in topological order: input types flow
// through the graph, each layer's nIn is inferred from what reaches it, and a layer receiving
// images where it reads rows (or flat images where it reads images) gets the reshape DL4J's
// preprocessors make. A layer given several inputs reads them concatenated: the builder adds a
// MergeVertex named "<layer>-merge" before it, as DL4J does. Everything wrong is a ConfigError
// naming the vertex: a duplicate name, an input that names no vertex, a cycle, a vertex nothing
// consumes that is not an output, inputs whose shapes disagree, a layer's own bad field, and the
// size limits of nn/conf/ConfigurationLimits.h (also on the number of vertices and of a vertex's
// inputs). A ComputationGraphConfiguration is therefore always valid.
#include <concepts>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/conf/NeuralNetConfiguration.h"
#include "nn/conf/graph/GraphVertex.h"
#include "nn/conf/layers/Layer.h"

namespace dl4cpp {

class GraphBuilder;

struct ComputationGraphConfiguration {
  using GraphBuilder = dl4cpp::GraphBuilder;

  // One vertex of the resolved graph: a layer, or another vertex.
  struct Vertex {
    std::string name;
    std::vector<std::string> inputs;            // vertices or network inputs, in order
    std::shared_ptr<const Layer> layer;         // a layer vertex (resolved), or null
    std::shared_ptr<const GraphVertex> vertex;  // another vertex, or null
    std::vector<InputType> inputTypes;          // what each input delivers
    InputPreProcessor preProcessor = InputPreProcessor::None;  // a layer: the reshape before it
    InputType layerInputType;                                  // a layer: what it consumes
    InputType outputType;
    // Its output has batchMultiplier / batchDivisor times the minibatch's examples (a
    // StackVertex or UnstackVertex above it; derived, lowest terms).
    int64_t batchMultiplier = 1, batchDivisor = 1;
    bool isLayer() const { return layer != nullptr; }
  };

  uint64_t seed = 0;
  LayerDefaults defaults;
  std::vector<std::string> networkInputs;
  std::vector<InputType> networkInputTypes;  // one per network input
  std::vector<std::string> networkOutputs;
  std::vector<Vertex> vertices;  // in topological order: every vertex after its inputs
  // Standard or truncated back-propagation through time, as MultiLayerConfiguration's (DL4J's
  // defaults). Truncated BPTT cuts every sequence input, label and mask of a minibatch into the
  // same segments; inputs that are not sequences feed each segment whole.
  BackpropType backpropType = BackpropType::Standard;
  int64_t tbpttFwdLength = 20;
  int64_t tbpttBackLength = 20;

  // The vertex named `name` in vertices, or -1.
  int vertexIndex(const std::string& name) const;
  // Learned parameters of every layer.
  int64_t numParams() const;
  // A table of vertices, their inputs, types and parameter counts.
  std::string summary() const;

  // Human-readable JSON holding every field (DL4J's toJson()/fromJson()): seed, defaults, the
  // network's inputs with their types, each vertex (a resolved layer or a vertex with its fields)
  // with its inputs and derived types, and the outputs. fromJson() rebuilds through the graph
  // builder, so a parsed configuration is checked exactly as a built one, and checks that the
  // derived fields it stores agree. Malformed or hostile text is a ConfigError naming the JSON
  // path, as for MultiLayerConfiguration::fromJson (at most 16 MiB, 64 levels of nesting).
  std::string toJson() const;
  static ComputationGraphConfiguration fromJson(const std::string& text);
};

// Equal when every field is (compares the JSON forms, which hold every field).
bool operator==(const ComputationGraphConfiguration& a, const ComputationGraphConfiguration& b);

// ComputationGraphConfiguration::GraphBuilder, from
// NeuralNetConfiguration::Builder::graphBuilder().
class GraphBuilder {
 public:
  GraphBuilder(uint64_t seed, LayerDefaults defaults);

  // The network's inputs, in the order the features of a MultiDataSet come in.
  template <typename... Names>
  requires(std::convertible_to<const Names&, std::string>&&...)
      GraphBuilder& addInputs(const Names&... names) {
    return addInputs(std::vector<std::string>{std::string(names)...});
  }
  GraphBuilder& addInputs(const std::vector<std::string>& names);
  // One type per input, in addInputs() order. Without them, an input read by a layer with nIn
  // set is taken to be rows of nIn values.
  template <typename... Types>
  requires(std::convertible_to<const Types&, InputType>&&...)
      GraphBuilder& setInputTypes(const Types&... types) {
    return setInputTypes(std::vector<InputType>{InputType(types)...});
  }
  GraphBuilder& setInputTypes(const std::vector<InputType>& types);
  // A layer (copied) reading `inputs`: one, or several read concatenated (a MergeVertex named
  // "<name>-merge" is added before it).
  template <typename... Names>
  requires(std::convertible_to<const Names&, std::string>&&...)
      GraphBuilder& addLayer(const std::string& name, const Layer& layer, const Names&... inputs) {
    return addLayer(name, layer, std::vector<std::string>{std::string(inputs)...});
  }
  GraphBuilder& addLayer(const std::string& name, const Layer& layer,
                         const std::vector<std::string>& inputs);
  // A vertex (copied) reading `inputs`.
  template <typename... Names>
  requires(std::convertible_to<const Names&, std::string>&&...) GraphBuilder& addVertex(
      const std::string& name, const GraphVertex& vertex, const Names&... inputs) {
    return addVertex(name, vertex, std::vector<std::string>{std::string(inputs)...});
  }
  GraphBuilder& addVertex(const std::string& name, const GraphVertex& vertex,
                          const std::vector<std::string>& inputs);
  // The vertices whose outputs the network delivers (and whose losses fit() sums), in order.
  template <typename... Names>
  requires(std::convertible_to<const Names&, std::string>&&...)
      GraphBuilder& setOutputs(const Names&... names) {
    return setOutputs(std::vector<std::string>{std::string(names)...});
  }
  GraphBuilder& setOutputs(const std::vector<std::string>& names);
  // Truncated back-propagation through time, as NeuralNetConfiguration::ListBuilder's (DL4J's
  // names; build() checks the lengths).
  GraphBuilder& backpropType(BackpropType type) {
    backpropType_ = type;
    return *this;
  }
  GraphBuilder& tBPTTForwardLength(int64_t steps) {
    tbpttFwdLength_ = steps;
    return *this;
  }
  GraphBuilder& tBPTTBackwardLength(int64_t steps) {
    tbpttBackLength_ = steps;
    return *this;
  }
  GraphBuilder& tBPTTLength(int64_t steps) {
    tbpttFwdLength_ = tbpttBackLength_ = steps;
    return *this;
  }

  ComputationGraphConfiguration build() const;

 private:
  struct Entry {
    std::string name;
    std::shared_ptr<Layer> layer;
    std::shared_ptr<GraphVertex> vertex;
    std::vector<std::string> inputs;
  };
  uint64_t seed_;
  LayerDefaults defaults_;
  std::vector<std::string> inputs_;
  std::vector<InputType> inputTypes_;
  std::vector<Entry> entries_;
  std::vector<std::string> outputs_;
  BackpropType backpropType_ = BackpropType::Standard;
  int64_t tbpttFwdLength_ = 20;
  int64_t tbpttBackLength_ = 20;
};

}  // namespace dl4cpp
