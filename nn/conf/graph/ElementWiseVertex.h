#pragma once
// ElementWiseVertex (DL4J's): combines inputs of one shape value by value: Add (a residual
// block's shortcut), Subtract (exactly two inputs: first minus second), Product, Average or Max.
//   .addVertex("add", ElementWiseVertex(ElementWiseVertex::Op::Add), "conv2", "shortcut")
// Max passes the gradient to the first input holding the maximum.
#include "nn/conf/ConfigurationLimits.h"
#include "nn/conf/Enums.h"
#include "nn/conf/graph/GraphVertex.h"

namespace dl4cpp {

class ElementWiseVertex : public GraphVertex {
 public:
  enum class Op { Add, Subtract, Product, Average, Max };
  static constexpr EnumNames<Op, 5> kOpNames{{{Op::Add, "Add"},
                                              {Op::Subtract, "Subtract"},
                                              {Op::Product, "Product"},
                                              {Op::Average, "Average"},
                                              {Op::Max, "Max"}}};

  ElementWiseVertex() = default;
  explicit ElementWiseVertex(Op op) : op(op) {}

  Op op = Op::Add;

  std::shared_ptr<GraphVertex> clone() const override {
    return std::make_shared<ElementWiseVertex>(*this);
  }
  std::string typeName() const override { return "ElementWiseVertex"; }
  bool takesSequences() const override { return true; }
  int minInputs() const override { return 2; }
  int maxInputs() const override {
    return op == Op::Subtract ? 2 : static_cast<int>(limits::kMaxVertexInputs);
  }
  InputType outputType(const std::string& name,
                       const std::vector<InputType>& inputs) const override;
  std::unique_ptr<layers::VertexRuntime> instantiate(
      const std::vector<InputType>& inputs) const override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
};

}  // namespace dl4cpp
