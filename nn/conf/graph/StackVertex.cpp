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
    detail::requireHost(ctx, "StackVertex");
    float* dst = output.data();
    for (const Tensor& x : inputs) dst = std::copy_n(x.data(), x.numel(), dst);
  }
  void backward(DeviceContext& ctx, std::span<const Tensor> inputs, const Tensor& /*output*/,
                const Tensor& outputGrad, std::span<Tensor> inputGrads) override {
    detail::requireHost(ctx, "StackVertex");
    const float* src = outputGrad.data();
    for (size_t i = 0; i < inputs.size(); ++i) {
      const int64_t size = inputs[i].numel();
      if (!inputGrads[i].empty()) std::copy_n(src, size, inputGrads[i].data());
      src += size;
    }
  }
};

// Part `from` of `stackSize`: one run of the input's values.
class UnstackRuntime : public layers::VertexRuntime {
 public:
  explicit UnstackRuntime(int64_t from) : from_(from) {}
  void forward(DeviceContext& ctx, std::span<const Tensor> inputs, Tensor& output,
               bool /*training*/) override {
    detail::requireHost(ctx, "UnstackVertex");
    std::copy_n(inputs[0].data() + from_ * output.numel(), output.numel(), output.data());
  }
  void backward(DeviceContext& ctx, std::span<const Tensor> /*inputs*/, const Tensor& /*output*/,
                const Tensor& outputGrad, std::span<Tensor> inputGrads) override {
    detail::requireHost(ctx, "UnstackVertex");
    Tensor& dx = inputGrads[0];
    if (dx.empty()) return;
    dx.fill(0);
    std::copy_n(outputGrad.data(), outputGrad.numel(), dx.data() + from_ * outputGrad.numel());
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
