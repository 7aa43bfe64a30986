#include "nn/conf/graph/ScaleVertex.h"

#include <fmt/format.h>

#include <cmath>

#include "nn/conf/graph/VertexLoops.h"
#include "nn/layers/VertexRuntime.h"

namespace dl4cpp {

InputType ScaleVertex::outputType(const std::string& name,
                                  const std::vector<InputType>& inputs) const {
  if (!std::isfinite(scaleFactor))
    throw ConfigError(
        fmt::format("{}: scaleFactor must be finite, got {}", where(name), scaleFactor));
  return inputs.front();
}

void ScaleVertex::writeFields(LayerFieldWriter& out) const {
  out.number("scaleFactor", scaleFactor);
}

void ScaleVertex::readFields(const LayerFieldReader& in) { scaleFactor = in.number("scaleFactor"); }

namespace {

class ScaleRuntime : public layers::VertexRuntime {
 public:
  explicit ScaleRuntime(float scale) : scale_(scale) {}
  void forward(DeviceContext& ctx, std::span<const Tensor> inputs, Tensor& output,
               bool /*training*/) override {
    ctx.backend().scaleShift(inputs[0], scale_, 0.0f, output);
  }
  void backward(DeviceContext& ctx, std::span<const Tensor> /*inputs*/, const Tensor& /*output*/,
                const Tensor& outputGrad, std::span<Tensor> inputGrads) override {
    if (!inputGrads[0].empty()) ctx.backend().scaleShift(outputGrad, scale_, 0.0f, inputGrads[0]);
  }

 private:
  float scale_;
};

}  // namespace

std::unique_ptr<layers::VertexRuntime> ScaleVertex::instantiate(
    const std::vector<InputType>& /*inputs*/) const {
  return std::make_unique<ScaleRuntime>(static_cast<float>(scaleFactor));
}

}  // namespace dl4cpp
