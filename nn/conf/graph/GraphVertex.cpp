#include "nn/conf/graph/GraphVertex.h"

#include <fmt/format.h>

#include "nn/conf/graph/ElementWiseVertex.h"
#include "nn/conf/graph/L2NormalizeVertex.h"
#include "nn/conf/graph/MergeVertex.h"
#include "nn/conf/graph/PreprocessorVertex.h"
#include "nn/conf/graph/ReshapeVertex.h"
#include "nn/conf/graph/ScaleVertex.h"
#include "nn/conf/graph/ShiftVertex.h"
#include "nn/conf/graph/StackVertex.h"
#include "nn/conf/graph/SubsetVertex.h"
#include "nn/core/Error.h"

namespace dl4cpp {

std::string GraphVertex::where(const std::string& name) const {
  return fmt::format("vertex \"{}\" ({})", name, typeName());
}

InputType GraphVertex::requireSameTypes(const std::string& name,
                                        const std::vector<InputType>& inputs) const {
  auto canonical = [](const InputType& t) {
    return t.kind == InputType::Kind::ConvolutionalFlat ? InputType::feedForward(t.flatSize()) : t;
  };
  const InputType first = canonical(inputs.front());
  for (size_t i = 1; i < inputs.size(); ++i) {
    const InputType t = canonical(inputs[i]);
    if (t.toString() != first.toString())
      throw ConfigError(fmt::format(
          "{}: its inputs must have the same shape, but input 0 is {} and input {} is {}",
          where(name), inputs.front().toString(), i, inputs[i].toString()));
  }
  return first;
}

namespace {

// The built-in vertex types, by name: the one list of them (as registerBuiltinLayers() is for
// layers).
template <typename... V>
struct VertexTable {
  static std::shared_ptr<GraphVertex> create(const std::string& name) {
    std::shared_ptr<GraphVertex> found;
    ((found = found ? found : (V().typeName() == name ? std::make_shared<V>() : nullptr)), ...);
    return found;
  }
  static std::vector<std::string> names() { return {V().typeName()...}; }
};
using BuiltinVertices =
    VertexTable<MergeVertex, ElementWiseVertex, SubsetVertex, ScaleVertex, ShiftVertex,
                L2NormalizeVertex, ReshapeVertex, PreprocessorVertex, StackVertex, UnstackVertex>;

}  // namespace

std::shared_ptr<GraphVertex> createBuiltinVertex(const std::string& typeName) {
  return BuiltinVertices::create(typeName);
}

std::vector<std::string> builtinVertexTypeNames() { return BuiltinVertices::names(); }

}  // namespace dl4cpp
