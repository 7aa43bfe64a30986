#pragma once
// dl4cpp's activations as ONNX nodes (opset 17), each with dl4cpp's definition and constants
// (nn/backend/OpTypes.h): where ONNX has the op (Relu, Elu, Selu, Softplus, HardSigmoid, ...) it
// is used with dl4cpp's parameters; GELU, GELU_PRECISE and SWISH, which opset 17 lacks, are
// composed of Sigmoid, Tanh, Mul and Add.
#include <string>

#include "nn/conf/Enums.h"
#include "nn/onnx/GraphWriter.h"

namespace dl4cpp::onnx {

// The value of `activation` applied to `x` (SOFTMAX over dimension 1, as dl4cpp); `base`
// names the new values. IDENTITY adds no node and returns `x`.
std::string exportActivation(GraphWriter& g, Activation activation, float leakyReluAlpha,
                             const std::string& x, const std::string& base);

}  // namespace dl4cpp::onnx
