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
    detail::requireHost(ctx, "ScaleVertex");
    const float* x = inputs[0].data();
    float* y = output.data();
    for (int64_t i = 0, n = output.numel(); i < n; ++i) y[i] = scale_ * x[i];
  }
  void backward(DeviceContext& ctx, std::span<const Tensor> /*inputs*/, const Tensor& /*output*/,
                const Tensor& outputGrad, std::span<Tensor> inputGrads) override {
    detail::requireHost(ctx, "ScaleVertex");
    if (inputGrads[0].empty()) return;
    const float* g = outputGrad.data();
    float* dx = inputGrads[0].data();
    for (int64_t i = 0, n = outputGrad.numel(); i < n; ++i) dx[i] = scale_ * g[i];
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
