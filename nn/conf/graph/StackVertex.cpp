#include "nn/conf/graph/StackVertex.h"

#include <fmt/format.h>

#include <algorithm>

#include "nn/conf/graph/VertexLoops.h"
#include "nn/layers/VertexRuntime.h"

namespace dl4cpp {

InputType StackVertex::outputType(const std::string& name,
                                  const std::vector<InputType>& inputs) const {
  // Stacked examples must be alike; images stay images.
  const InputType same = requireSameTypes(name, inputs);
  return inputs.front().kind == InputType::Kind::ConvolutionalFlat ? same : inputs.front();
}

InputType UnstackVertex::outputType(const std::string& name,
                                    const std::vector<InputType>& inputs) const {
  if (stackSize < 1 || from < 0 || from >= stackSize)
    throw ConfigError(
        fmt::format("{}: from and stackSize must satisfy 0 <= from < stackSize, got from = {} and "
                    "stackSize = {}",
                    where(name), from, stackSize));
  return inputs.front();
}

void UnstackVertex::writeFields(LayerFieldWriter& out) const {
  out.integer("from", from);
  out.integer("stackSize", stackSize);
}

void UnstackVertex::readFields(const LayerFieldReader& in) {
  from = in.size("from", limits::kMaxVertexInputs);
  stackSize = in.size("stackSize", limits::kMaxVertexInputs);
}

namespace {

// Examples are contiguous (batch dimension first), so input i is one run of the output: rows
// i·N .. (i + 1)·N - 1.
class StackRuntime : public layers::VertexRuntime {
 public:
  void forward(DeviceContext& ctx, std::span<const Tensor> inputs, Tensor& output,
               bool /*training*/) override {
    int64_t offset = 0;
    for (const Tensor& x : inputs) {
      ctx.backend().copyBlocks(x, 0, 0, output, offset, 0, x.numel(), 1);
      offset += x.numel();
    }
  }
  void backward(DeviceContext& ctx, std::span<const Tensor> inputs, const Tensor& /*output*/,
                const Tensor& outputGrad, std::span<Tensor> inputGrads) override {
    int64_t offset = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const int64_t size = inputs[i].numel();
      if (!inputGrads[i].empty())
        ctx.backend().copyBlocks(outputGrad, offset, 0, inputGrads[i], 0, 0, size, 1);
      offset += size;
    }
  }
};

// Part `from` of `stackSize`: one run of the input's values.
class UnstackRuntime : public layers::VertexRuntime {
 public:
  explicit UnstackRuntime(int64_t from) : from_(from) {}
  void forward(DeviceContext& ctx, std::span<const Tensor> inputs, Tensor& output,
               bool /*training*/) override {
    const int64_t size = output.numel();
    ctx.backend().copyBlocks(inputs[0], from_ * size, 0, output, 0, 0, size, 1);
  }
  void backward(DeviceContext& ctx, std::span<const Tensor> /*inputs*/, const Tensor& /*output*/,
                const Tensor& outputGrad, std::span<Tensor> inputGrads) override {
    Tensor& dx = inputGrads[0];
    if (dx.empty()) return;
    const int64_t size = outputGrad.numel();
    dx.fill(0);
    ctx.backend().copyBlocks(outputGrad, 0, 0, dx, from_ * size, 0, size, 1);
  }

 private:
  int64_t from_;
};

}  // namespace

std::unique_ptr<layers::VertexRuntime> StackVertex::instantiate(
    const std::vector<InputType>& /*inputs*/) const {
  return std::make_unique<StackRuntime>();
}

std::unique_ptr<layers::VertexRuntime> UnstackVertex::instantiate(
    const std::vector<InputType>& /*inputs*/) const {
  return std::make_unique<UnstackRuntime>(from);
}

}  // namespace dl4cpp
