#pragma once
// ShiftVertex (DL4J's): adds a constant to its input, y = x + shiftFactor.
//   .addVertex("shiftd", ShiftVertex(0.5), "dense")
#include "nn/conf/graph/GraphVertex.h"

namespace dl4cpp {

class ShiftVertex : public GraphVertex {
 public:
  ShiftVertex() = default;
  explicit ShiftVertex(double shiftFactor) : shiftFactor(shiftFactor) {}

  double shiftFactor = 0;

  std::shared_ptr<GraphVertex> clone() const override {
    return std::make_shared<ShiftVertex>(*this);
  }
  std::string typeName() const override { return "ShiftVertex"; }
  bool takesSequences() const override { return true; }
  InputType outputType(const std::string& name,
                       const std::vector<InputType>& inputs) const override;
  std::unique_ptr<layers::VertexRuntime> instantiate(
      const std::vector<InputType>& inputs) const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
};

}  // namespace dl4cpp
