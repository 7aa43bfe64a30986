#pragma once
// MergeVertex (DL4J's): concatenates its inputs along the features of rows, (N, a) and (N, b) to
// (N, a + b), or along the channels of images, (N, c1, H, W) and (N, c2, H, W) to
// (N, c1 + c2, H, W) (Inception's branches). Inputs must be all rows or all images of one size.
// The graph builder adds one before a layer given several inputs, as DL4J does.
#include "nn/conf/ConfigurationLimits.h"
#include "nn/conf/graph/GraphVertex.h"

namespace dl4cpp {

class MergeVertex : public GraphVertex {
 public:
  std::shared_ptr<GraphVertex> clone() const override {
    return std::make_shared<MergeVertex>(*this);
  }
  std::string typeName() const override { return "MergeVertex"; }
  bool takesSequences() const override { return true; }
  int maxInputs() const override { return static_cast<int>(limits::kMaxVertexInputs); }
  InputType outputType(const std::string& name,
                       const std::vector<InputType>& inputs) const override;
  std::unique_ptr<layers::VertexRuntime> instantiate(
      const std::vector<InputType>& inputs) const override;
};

}  // namespace dl4cpp
