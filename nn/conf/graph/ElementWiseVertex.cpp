#include "nn/conf/graph/ElementWiseVertex.h"

#include <algorithm>

#include "nn/conf/graph/VertexLoops.h"
#include "nn/layers/VertexRuntime.h"

namespace dl4cpp {

InputType ElementWiseVertex::outputType(const std::string& name,
                                        const std::vector<InputType>& inputs) const {
  (void)requireSameTypes(name, inputs);
  // Images stay images, flat images stay flat: the first input's form.
  return inputs.front();
}

void ElementWiseVertex::writeFields(LayerFieldWriter& out) const {
  out.enumValue("op", kOpNames, op);
}

void ElementWiseVertex::readFields(const LayerFieldReader& in) {
  op = in.enumValue("op", kOpNames);
}

namespace {

class ElementWiseRuntime : public layers::VertexRuntime {
 public:
  explicit ElementWiseRuntime(ElementWiseVertex::Op op) : op_(combineOpOf(op)) {}

  void forward(DeviceContext& ctx, std::span<const Tensor> inputs, Tensor& output,
               bool /*training*/) override {
    ctx.backend().combineForward(op_, inputs, output);
  }
  void backward(DeviceContext& ctx, std::span<const Tensor> inputs, const Tensor& output,
                const Tensor& outputGrad, std::span<Tensor> inputGrads) override {
    ctx.backend().combineBackward(op_, inputs, output, outputGrad, inputGrads);
  }
  std::optional<CombineOp> combineOp() const override { return op_; }

 private:
  static CombineOp combineOpOf(ElementWiseVertex::Op op) {
    switch (op) {
      case ElementWiseVertex::Op::Add:
        return CombineOp::ADD;
      case ElementWiseVertex::Op::Subtract:
        return CombineOp::SUBTRACT;
      case ElementWiseVertex::Op::Product:
        return CombineOp::PRODUCT;
      case ElementWiseVertex::Op::Average:
        return CombineOp::AVERAGE;
      case ElementWiseVertex::Op::Max:
        return CombineOp::MAX;
    }
    return CombineOp::ADD;
  }

  CombineOp op_;
};

}  // namespace

std::unique_ptr<layers::VertexRuntime> ElementWiseVertex::instantiate(
    const std::vector<InputType>& /*inputs*/) const {
  return std::make_unique<ElementWiseRuntime>(op);
}

}  // namespace dl4cpp
