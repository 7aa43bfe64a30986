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
  explicit ElementWiseRuntime(ElementWiseVertex::Op op) : op_(op) {}

  void forward(DeviceContext& ctx, std::span<const Tensor> inputs, Tensor& output,
               bool /*training*/) override {
    detail::requireHost(ctx, "ElementWiseVertex");
    using Op = ElementWiseVertex::Op;
    const int64_t size = output.numel();
    float* y = output.data();
    std::copy_n(inputs[0].data(), size, y);
    for (size_t k = 1; k < inputs.size(); ++k) {
      const float* x = inputs[k].data();
      switch (op_) {
        case Op::Add:
        case Op::Average:
          for (int64_t i = 0; i < size; ++i) y[i] += x[i];
          break;
        case Op::Subtract:
          for (int64_t i = 0; i < size; ++i) y[i] -= x[i];
          break;
        case Op::Product:
          for (int64_t i = 0; i < size; ++i) y[i] *= x[i];
          break;
        case Op::Max:
          for (int64_t i = 0; i < size; ++i) y[i] = std::max(y[i], x[i]);
          break;
      }
    }
    if (op_ == Op::Average) {
      const float inverse = 1.0f / static_cast<float>(inputs.size());
      for (int64_t i = 0; i < size; ++i) y[i] *= inverse;
    }
  }

  void backward(DeviceContext& ctx, std::span<const Tensor> inputs, const Tensor& output,
                const Tensor& outputGrad, std::span<Tensor> inputGrads) override {
    detail::requireHost(ctx, "ElementWiseVertex");
    using Op = ElementWiseVertex::Op;
    const int64_t size = output.numel();
    const float* g = outputGrad.data();
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (inputGrads[k].empty()) continue;
      float* dx = inputGrads[k].data();
      switch (op_) {
        case Op::Add:
          std::copy_n(g, size, dx);
          break;
        case Op::Average: {
          const float inverse = 1.0f / static_cast<float>(inputs.size());
          for (int64_t i = 0; i < size; ++i) dx[i] = g[i] * inverse;
          break;
        }
        case Op::Subtract:
          if (k == 0)
            std::copy_n(g, size, dx);
          else
            for (int64_t i = 0; i < size; ++i) dx[i] = -g[i];
          break;
        case Op::Product:
          // The product of the other inputs, formed again rather than divided out of the output
          // (an input may hold zeros).
          std::copy_n(g, size, dx);
          for (size_t j = 0; j < inputs.size(); ++j) {
            if (j == k) continue;
            const float* x = inputs[j].data();
            for (int64_t i = 0; i < size; ++i) dx[i] *= x[i];
          }
          break;
        case Op::Max: {
          const float* y = output.data();
          for (int64_t i = 0; i < size; ++i) {
            // The first input holding the maximum takes the gradient.
            size_t winner = 0;
            while (winner + 1 < inputs.size() && inputs[winner].data()[i] != y[i]) ++winner;
            dx[i] = winner == k ? g[i] : 0.0f;
          }
          break;
        }
      }
    }
  }

 private:
  ElementWiseVertex::Op op_;
};

}  // namespace

std::unique_ptr<layers::VertexRuntime> ElementWiseVertex::instantiate(
    const std::vector<InputType>& /*inputs*/) const {
  return std::make_unique<ElementWiseRuntime>(op);
}

}  // namespace dl4cpp
