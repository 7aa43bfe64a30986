#pragma once
// A model file's normalizer as the ONNX model's leading nodes, x * scale + shift per value of an
// example, so that the exported model takes raw features as the served dl4cpp model does
// (ParallelInference applies the normalizer before the network).
//
// Every normalizer dl4cpp has (NormalizerStandardize, NormalizerMinMaxScaler,
// ImagePreProcessingScaler) maps each value x of an example to x * scale + shift, scale and shift
// depending on the value's column or channel. The exporter reads them from the normalizer itself,
// whatever its class: transformInput() of an example of zeros gives the shifts, of ones
// scale + shift. A third probe (twos) checks that the map is affine; a normalizer that is not is
// a ModelExchangeError, never a silently different model.
#include "iterators/DataNormalization.h"
#include "nn/onnx/GraphWriter.h"

namespace dl4cpp::onnx {

// `input` (the network's input, of type `inputType`) normalized by `normalizer`.
Value exportNormalizer(GraphWriter& g, const DataNormalization& normalizer,
                       const InputType& inputType, const Value& input);

}  // namespace dl4cpp::onnx
