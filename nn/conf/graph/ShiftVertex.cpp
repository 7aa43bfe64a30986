#include "nn/conf/graph/ShiftVertex.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "nn/conf/graph/VertexLoops.h"
#include "nn/layers/VertexRuntime.h"

namespace dl4cpp {

InputType ShiftVertex::outputType(const std::string& name,
                                  const std::vector<InputType>& inputs) const {
  if (!std::isfinite(shiftFactor))
    throw ConfigError(
        fmt::format("{}: shiftFactor must be finite, got {}", where(name), shiftFactor));
  return inputs.front();
}

void ShiftVertex::writeFields(LayerFieldWriter& out) const {
  out.number("shiftFactor", shiftFactor);
}

void ShiftVertex::readFields(const LayerFieldReader& in) { shiftFactor = in.number("shiftFactor"); }

namespace {

class ShiftRuntime : public layers::VertexRuntime {
 public:
  explicit ShiftRuntime(float shift) : shift_(shift) {}
  void forward(DeviceContext& ctx, std::span<const Tensor> inputs, Tensor& output,
               bool /*training*/) override {
    ctx.backend().scaleShift(inputs[0], 1.0f, shift_, output);
  }
  void backward(DeviceContext& ctx, std::span<const Tensor> /*inputs*/, const Tensor& /*output*/,
                const Tensor& outputGrad, std::span<Tensor> inputGrads) override {
    if (!inputGrads[0].empty()) ctx.backend().copy(outputGrad, inputGrads[0]);
  }

 private:
  float shift_;
};

}  // namespace

std::unique_ptr<layers::VertexRuntime> ShiftVertex::instantiate(
    const std::vector<InputType>& /*inputs*/) const {
  return std::make_unique<ShiftRuntime>(static_cast<float>(shiftFactor));
}

}  // namespace dl4cpp
