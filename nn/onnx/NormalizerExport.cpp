#include "nn/onnx/NormalizerExport.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "nn/core/Error.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::onnx {

namespace {

std::vector<float> probe(const DataNormalization& normalizer, const InputType& inputType,
                         float value) {
  Tensor example(inputType.shape(1));
  example.fill(value);
  normalizer.transformInput(example, inputType);
  return example.toVector();
}

}  // namespace

Value exportNormalizer(GraphWriter& g, const DataNormalization& normalizer,
                       const InputType& inputType, const Value& input) {
  normalizer.requireInput(inputType);
  const std::vector<float> shift = probe(normalizer, inputType, 0.0f);
  const std::vector<float> one = probe(normalizer, inputType, 1.0f);
  const std::vector<float> two = probe(normalizer, inputType, 2.0f);
  std::vector<float> scale(shift.size());
  for (size_t i = 0; i < shift.size(); ++i) {
    scale[i] = one[i] - shift[i];
    const double expected = 2.0 * scale[i] + shift[i];
    const double tolerance = 1e-5 * (std::abs(expected) + std::abs(shift[i]) + 1.0);
    if (!std::isfinite(scale[i]) || !std::isfinite(shift[i]) ||
        std::abs(two[i] - expected) > tolerance)
      throw ModelExchangeError(fmt::format(
          "ONNX export: the normalizer does not map value {} of an example by x * scale + shift "
          "(0 -> {}, 1 -> {}, 2 -> {}), which is what the exporter writes as leading nodes",
          i, shift[i], one[i], two[i]));
  }
  std::vector<int64_t> shape{1};
  for (int64_t d : dimsAfterBatch(inputType)) shape.push_back(d);
  const std::string scaled =
      g.node("Mul", {input.name, g.floats("normalizer_scale", shape, scale)}, "normalizer_scaled");
  return {g.node("Add", {scaled, g.floats("normalizer_shift", shape, shift)}, "normalized"),
          input.type};
}

}  // namespace dl4cpp::onnx
