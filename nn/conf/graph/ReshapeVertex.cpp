#include "nn/conf/graph/ReshapeVertex.h"

#include <fmt/format.h>

#include "nn/conf/ConfigurationLimits.h"
#include "nn/conf/graph/VertexLoops.h"

namespace dl4cpp {

InputType ReshapeVertex::outputType(const std::string& name,
                                    const std::vector<InputType>& inputs) const {
  if (newShape.size() != 2 && newShape.size() != 4)
    throw ConfigError(fmt::format(
        "{}: newShape must have rank 2 (rows) or 4 (images), batch dimension first; got {} "
        "dimensions",
        where(name), newShape.size()));
  if (newShape[0] != -1)
    throw ConfigError(
        fmt::format("{}: newShape's batch dimension must be -1 (the minibatch size), got {}",
                    where(name), newShape[0]));
  int64_t values = 1;
  for (size_t i = 1; i < newShape.size(); ++i) {
    if (newShape[i] < 1 || newShape[i] > limits::kMaxExtent)
      throw ConfigError(fmt::format("{}: newShape's dimension {} must be in 1..{}, got {}",
                                    where(name), i, limits::kMaxExtent, newShape[i]));
    values *= newShape[i];
  }
  const InputType& in = inputs.front();
  if (values != in.flatSize())
    throw ConfigError(fmt::format("{}: newShape holds {} values per example, its input {} holds {}",
                                  where(name), values, in.toString(), in.flatSize()));
  if (newShape.size() == 2) return InputType::feedForward(newShape[1]);
  return InputType::convolutional(newShape[2], newShape[3], newShape[1]);
}

void ReshapeVertex::writeFields(LayerFieldWriter& out) const {
  // The batch dimension is always -1: the JSON holds the others.
  const std::vector<int64_t> perExample(newShape.begin() + (newShape.empty() ? 0 : 1),
                                        newShape.end());
  out.integer("rank", static_cast<int64_t>(newShape.size()));
  out.integers("shape", perExample);
}

void ReshapeVertex::readFields(const LayerFieldReader& in) {
  const int64_t rank = in.size("rank", 4);
  if (rank != 2 && rank != 4) in.fail("rank", "must be 2 or 4");
  newShape = {-1};
  for (int64_t v : in.sizes("shape", static_cast<size_t>(rank - 1), limits::kMaxExtent))
    newShape.push_back(v);
}

std::unique_ptr<layers::VertexRuntime> ReshapeVertex::instantiate(
    const std::vector<InputType>& /*inputs*/) const {
  return std::make_unique<detail::ReshapeRuntime>();
}

}  // namespace dl4cpp
