#include "nn/conf/graph/L2NormalizeVertex.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "nn/conf/graph/VertexLoops.h"
#include "nn/layers/VertexRuntime.h"

namespace dl4cpp {

InputType L2NormalizeVertex::outputType(const std::string& name,
                                        const std::vector<InputType>& inputs) const {
  if (!std::isfinite(eps) || eps <= 0)
    throw ConfigError(fmt::format("{}: eps must be finite and > 0, got {}", where(name), eps));
  return inputs.front();
}

void L2NormalizeVertex::writeFields(LayerFieldWriter& out) const { out.number("eps", eps); }

void L2NormalizeVertex::readFields(const LayerFieldReader& in) { eps = in.number("eps"); }

namespace {

class L2NormalizeRuntime : public layers::VertexRuntime {
 public:
  explicit L2NormalizeRuntime(double eps) : eps_(eps) {}

  void forward(DeviceContext& ctx, std::span<const Tensor> inputs, Tensor& output,
               bool /*training*/) override {
    ctx.backend().l2NormalizeForward(inputs[0], eps_, output);
  }
  void backward(DeviceContext& ctx, std::span<const Tensor> inputs, const Tensor& /*output*/,
                const Tensor& outputGrad, std::span<Tensor> inputGrads) override {
    if (!inputGrads[0].empty())
      ctx.backend().l2NormalizeBackward(inputs[0], eps_, outputGrad, inputGrads[0]);
  }

 private:
  double eps_;
};

}  // namespace

std::unique_ptr<layers::VertexRuntime> L2NormalizeVertex::instantiate(
    const std::vector<InputType>& /*inputs*/) const {
  return std::make_unique<L2NormalizeRuntime>(eps);
}

}  // namespace dl4cpp
