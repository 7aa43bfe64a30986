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
    detail::requireHost(ctx, "L2NormalizeVertex");
    const Tensor& x = inputs[0];
    const int64_t n = x.dim(0), size = detail::valuesPerExample(x);
    for (int64_t e = 0; e < n; ++e) {
      const float* xe = x.data() + e * size;
      float* ye = output.data() + e * size;
      const float inverse = static_cast<float>(1.0 / denominator(xe, size));
      for (int64_t i = 0; i < size; ++i) ye[i] = xe[i] * inverse;
    }
  }

  // With r = ||x||: dx = g / r - x (g . x) / r^3 where r > eps; dx = g / eps where the norm is
  // clamped (y = x / eps there).
  void backward(DeviceContext& ctx, std::span<const Tensor> inputs, const Tensor& /*output*/,
                const Tensor& outputGrad, std::span<Tensor> inputGrads) override {
    detail::requireHost(ctx, "L2NormalizeVertex");
    if (inputGrads[0].empty()) return;
    const Tensor& x = inputs[0];
    const int64_t n = x.dim(0), size = detail::valuesPerExample(x);
    for (int64_t e = 0; e < n; ++e) {
      const float* xe = x.data() + e * size;
      const float* ge = outputGrad.data() + e * size;
      float* dx = inputGrads[0].data() + e * size;
      const double norm = std::sqrt(sumOfSquares(xe, size));
      if (norm <= eps_) {
        for (int64_t i = 0; i < size; ++i) dx[i] = static_cast<float>(ge[i] / eps_);
        continue;
      }
      double dot = 0;
      for (int64_t i = 0; i < size; ++i) dot += double(ge[i]) * xe[i];
      const double a = 1 / norm, b = dot / (norm * norm * norm);
      for (int64_t i = 0; i < size; ++i) dx[i] = static_cast<float>(ge[i] * a - xe[i] * b);
    }
  }

 private:
  static double sumOfSquares(const float* x, int64_t size) {
    double s = 0;
    for (int64_t i = 0; i < size; ++i) s += double(x[i]) * x[i];
    return s;
  }
  double denominator(const float* x, int64_t size) const {
    return std::max(std::sqrt(sumOfSquares(x, size)), eps_);
  }

  double eps_;
};

}  // namespace

std::unique_ptr<layers::VertexRuntime> L2NormalizeVertex::instantiate(
    const std::vector<InputType>& /*inputs*/) const {
  return std::make_unique<L2NormalizeRuntime>(eps);
}

}  // namespace dl4cpp
