#pragma once
// Graph vertices that are not layers (DL4J's org.deeplearning4j.nn.conf.graph): plain values
// describing what a ComputationGraph computes from one or more vertices' outputs, added with
// ComputationGraphConfiguration::GraphBuilder::addVertex(name, vertex, inputs...):
//   .addVertex("merge", MergeVertex(), "branch1", "branch2")
//   .addVertex("add", ElementWiseVertex(ElementWiseVertex::Op::Add), "conv2", "shortcut")
//
// A vertex type is one pair of files in this folder, as a layer type is (docs/adding-a-layer.md):
// X.h its configuration under DL4J's name, X.cpp its output type, JSON fields and its runtime
// object (layers::VertexRuntime, private to X.cpp). The graph builder asks outputType() for what
// the vertex delivers given what its inputs deliver, which is also where inputs that disagree are
// refused (ConfigError naming the vertex). Vertices have no parameters and no state.
//
// Vertices' runtimes run on the backend's ops (ops/TransformOps.h, VertexLoops.h), on any device.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/conf/InputType.h"
#include "nn/conf/LayerFields.h"

namespace dl4cpp {

namespace layers {
class VertexRuntime;
}  // namespace layers

class GraphVertex {
 public:
  virtual ~GraphVertex() = default;
  virtual std::shared_ptr<GraphVertex> clone() const = 0;
  // The name JSON knows the type by (DL4J's class name).
  virtual std::string typeName() const = 0;
  // How many inputs the vertex takes: [minInputs(), maxInputs()].
  virtual int minInputs() const { return 1; }
  virtual int maxInputs() const { return 1; }
  // Whether it takes sequences (N, F, T): true for the vertices that compute on each example's
  // values as one run, whatever its length (element-wise, scaling, merging and subsetting
  // features). The graph builder refuses sequences for the others, naming the vertex.
  virtual bool takesSequences() const { return false; }
  // How the vertex changes the number of examples: its output has multiplier / divisor times as
  // many as each of its `numInputs` inputs (StackVertex, UnstackVertex); most keep it.
  struct BatchScale {
    int64_t multiplier = 1, divisor = 1;
  };
  virtual BatchScale batchScale(size_t numInputs) const {
    (void)numInputs;
    return {};
  }
  // What the vertex delivers when its inputs deliver `inputs` (their count checked already).
  // ConfigError naming the vertex (`name`) when they do not fit together or with its fields.
  virtual InputType outputType(const std::string& name,
                               const std::vector<InputType>& inputs) const = 0;
  // The runtime object for inputs of these types (those outputType() accepted).
  virtual std::unique_ptr<layers::VertexRuntime> instantiate(
      const std::vector<InputType>& inputs) const = 0;

  // The type's own fields in its JSON object; readFields() reads what writeFields() wrote (into a
  // default-constructed vertex).
  virtual void writeFields(LayerFieldWriter& out) const { (void)out; }
  virtual void readFields(const LayerFieldReader& in) { (void)in; }

 protected:
  // "vertex \"add\" (ElementWiseVertex)": the prefix of every error about the vertex.
  std::string where(const std::string& name) const;
  // ConfigError unless every input delivers the same type (ConvolutionalFlat counts as the rows it
  // is); returns it.
  InputType requireSameTypes(const std::string& name, const std::vector<InputType>& inputs) const;
};

// A default-constructed built-in vertex of the type `typeName`, or nullptr when there is none.
std::shared_ptr<GraphVertex> createBuiltinVertex(const std::string& typeName);
// The built-in vertex types' names.
std::vector<std::string> builtinVertexTypeNames();

}  // namespace dl4cpp
