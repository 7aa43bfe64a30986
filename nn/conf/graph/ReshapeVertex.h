#pragma once
// ReshapeVertex (DL4J's): the same values per example, seen with another shape (C order, the
// layout activations have: (N, C, H, W) images are C-major). DL4J's newShape includes the batch
// dimension as -1:
//   .addVertex("asImage", ReshapeVertex({-1, 2, 4, 4}), "dense32")   // (N, 32) -> (N, 2, 4, 4)
//   .addVertex("flat", ReshapeVertex({-1, 32}), "image")              // (N, 2, 4, 4) -> (N, 32)
// Shapes of rank 2 deliver rows, of rank 4 images (N, channels, height, width). ConfigError
// naming the vertex when the batch dimension is not -1, another dimension is not positive, the
// rank is neither, or the values per example differ from the input's.
#include <cstdint>
#include <vector>

#include "nn/conf/graph/GraphVertex.h"

namespace dl4cpp {

class ReshapeVertex : public GraphVertex {
 public:
  ReshapeVertex() = default;
  explicit ReshapeVertex(std::vector<int64_t> newShape) : newShape(std::move(newShape)) {}

  std::vector<int64_t> newShape;  // batch dimension first, as -1

  std::shared_ptr<GraphVertex> clone() const override {
    return std::make_shared<ReshapeVertex>(*this);
  }
  std::string typeName() const override { return "ReshapeVertex"; }
  InputType outputType(const std::string& name,
                       const std::vector<InputType>& inputs) const override;
  std::unique_ptr<layers::VertexRuntime> instantiate(
      const std::vector<InputType>& inputs) const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
};

}  // namespace dl4cpp
