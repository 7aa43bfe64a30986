#pragma once
// SubsetVertex (DL4J's): features from..to (inclusive) of rows, (N, a) to (N, to - from + 1), or
// channels from..to of images, (N, C, H, W) to (N, to - from + 1, H, W).
//   .addVertex("firstHalf", SubsetVertex(0, 9), "dense")
#include <cstdint>

#include "nn/conf/graph/GraphVertex.h"

namespace dl4cpp {

class SubsetVertex : public GraphVertex {
 public:
  SubsetVertex() = default;
  SubsetVertex(int64_t from, int64_t to) : from(from), to(to) {}

  int64_t from = 0;
  int64_t to = 0;

  std::shared_ptr<GraphVertex> clone() const override {
    return std::make_shared<SubsetVertex>(*this);
  }
  std::string typeName() const override { return "SubsetVertex"; }
  bool takesSequences() const override { return true; }
  InputType outputType(const std::string& name,
                       const std::vector<InputType>& inputs) const override;
  std::unique_ptr<layers::VertexRuntime> instantiate(
      const std::vector<InputType>& inputs) const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
};

}  // namespace dl4cpp
