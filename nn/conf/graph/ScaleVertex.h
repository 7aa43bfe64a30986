#pragma once
// ScaleVertex (DL4J's): multiplies its input by a constant, y = scaleFactor * x.
//   .addVertex("scaled", ScaleVertex(0.5), "dense")
#include "nn/conf/graph/GraphVertex.h"

namespace dl4cpp {

class ScaleVertex : public GraphVertex {
 public:
  ScaleVertex() = default;
  explicit ScaleVertex(double scaleFactor) : scaleFactor(scaleFactor) {}

  double scaleFactor = 1;

  std::shared_ptr<GraphVertex> clone() const override {
    return std::make_shared<ScaleVertex>(*this);
  }
  std::string typeName() const override { return "ScaleVertex"; }
  bool takesSequences() const override { return true; }
  InputType outputType(const std::string& name,
                       const std::vector<InputType>& inputs) const override;
  std::unique_ptr<layers::VertexRuntime> instantiate(
      const std::vector<InputType>& inputs) const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
};

}  // namespace dl4cpp
