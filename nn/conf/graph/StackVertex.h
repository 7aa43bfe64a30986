#pragma once
// StackVertex and UnstackVertex (DL4J's): one set of layers applied to several inputs alike
// (siamese and triplet networks share weights this way).
//
// StackVertex joins its inputs along the example dimension: k inputs of N examples each, all of
// one type, give k·N examples, input 0's first. What follows it runs on batches k times larger.
// UnstackVertex(from, stackSize) undoes it: of the stackSize equal parts its input's examples
// split into, it delivers part `from` (examples from·N .. (from + 1)·N - 1 of k·N).
//
//   .addVertex("stack", StackVertex(), "left", "right")          // (2N, 16)
//   .addLayer("shared", DenseLayer::Builder().nOut(8).build(), "stack")
//   .addVertex("leftOut", UnstackVertex(0, 2), "shared")         // (N, 8)
//   .addVertex("rightOut", UnstackVertex(1, 2), "shared")        // (N, 8)
//
// The graph builder follows each vertex's batch size as a multiple of the minibatch (N·a/b) and
// refuses, naming the vertex, a vertex whose inputs disagree (merging a stacked path with an
// unstacked one). A minibatch an UnstackVertex cannot split evenly is a ShapeError when it runs.
// Labels are given per example of the minibatch, so a graph trains where its loss outputs see N
// examples.
#include <cstdint>

#include "nn/conf/ConfigurationLimits.h"
#include "nn/conf/graph/GraphVertex.h"

namespace dl4cpp {

class StackVertex : public GraphVertex {
 public:
  std::shared_ptr<GraphVertex> clone() const override {
    return std::make_shared<StackVertex>(*this);
  }
  std::string typeName() const override { return "StackVertex"; }
  int maxInputs() const override { return static_cast<int>(limits::kMaxVertexInputs); }
  BatchScale batchScale(size_t numInputs) const override {
    return {static_cast<int64_t>(numInputs), 1};
  }
  InputType outputType(const std::string& name,
                       const std::vector<InputType>& inputs) const override;
  std::unique_ptr<layers::VertexRuntime> instantiate(
      const std::vector<InputType>& inputs) const override;
};

class UnstackVertex : public GraphVertex {
 public:
  UnstackVertex() = default;
  UnstackVertex(int64_t from, int64_t stackSize) : from(from), stackSize(stackSize) {}

  int64_t from = 0;
  int64_t stackSize = 1;

  std::shared_ptr<GraphVertex> clone() const override {
    return std::make_shared<UnstackVertex>(*this);
  }
  std::string typeName() const override { return "UnstackVertex"; }
  BatchScale batchScale(size_t /*numInputs*/) const override { return {1, stackSize}; }
  InputType outputType(const std::string& name,
                       const std::vector<InputType>& inputs) const override;
  std::unique_ptr<layers::VertexRuntime> instantiate(
      const std::vector<InputType>& inputs) const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
};

}  // namespace dl4cpp
