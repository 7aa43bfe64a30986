#pragma once
// L2NormalizeVertex (DL4J's): divides each example by its L2 norm over all its values,
// y = x / max(||x||, eps) (embeddings compared by cosine, FaceNet's last step).
//   .addVertex("normalized", L2NormalizeVertex(), "embedding")
#include "nn/conf/graph/GraphVertex.h"

namespace dl4cpp {

class L2NormalizeVertex : public GraphVertex {
 public:
  L2NormalizeVertex() = default;
  explicit L2NormalizeVertex(double eps) : eps(eps) {}

  double eps = 1e-8;  // DL4J's default

  std::shared_ptr<GraphVertex> clone() const override {
    return std::make_shared<L2NormalizeVertex>(*this);
  }
  std::string typeName() const override { return "L2NormalizeVertex"; }
  InputType outputType(const std::string& name,
                       const std::vector<InputType>& inputs) const override;
  std::unique_ptr<layers::VertexRuntime> instantiate(
      const std::vector<InputType>& inputs) const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
};

}  // namespace dl4cpp
