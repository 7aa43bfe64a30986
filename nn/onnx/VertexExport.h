#pragma once
// One graph vertex that is not a layer (nn/conf/graph) as ONNX nodes: MergeVertex as Concat,
// ElementWiseVertex as Sum/Sub/Mul/Mean/Max, SubsetVertex as Slice, ScaleVertex and ShiftVertex
// as Mul and Add by a constant, L2NormalizeVertex as ReduceL2, Max and Div, ReshapeVertex and
// PreprocessorVertex as Reshape/Flatten. Another vertex type (a user's own) is a
// ModelExchangeError naming the vertex.
#include <string>
#include <vector>

#include "nn/conf/graph/GraphVertex.h"
#include "nn/onnx/GraphWriter.h"

namespace dl4cpp::onnx {

// The value `vertex` (named `name`, delivering `outputType`) produces from `inputs`.
Value exportVertex(GraphWriter& g, const GraphVertex& vertex, const std::string& name,
                   const InputType& outputType, const std::vector<Value>& inputs);

}  // namespace dl4cpp::onnx
