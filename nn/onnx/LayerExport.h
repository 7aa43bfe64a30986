#pragma once
// One configured layer of a network or graph as ONNX nodes, in inference form: the reshape dl4cpp
// makes before it (its InputPreProcessor), the layer's op with its parameters and state as
// initializers, then its activation. Layers whose configuration ONNX cannot express, and layer
// types this exporter does not know (a user's own), are a ModelExchangeError naming the layer.
#include <span>
#include <string>

#include "nn/conf/NeuralNetConfiguration.h"
#include "nn/conf/layers/Layer.h"
#include "nn/onnx/GraphWriter.h"

namespace dl4cpp::onnx {

struct LayerToExport {
  const Layer& layer;
  std::string name;  // the layer's name in messages and node names
  InputPreProcessor preProcessor = InputPreProcessor::None;
  InputType inputType;            // what the layer consumes (after the preprocessor)
  InputType outputType;           // what it produces
  std::span<const float> params;  // its parameters, in paramSpecs() order
  std::span<const float> state;   // its layer state, in stateSpecs() order
};

// Throws the ModelExchangeError naming the layer and why ONNX cannot express it.
[[noreturn]] void refuseLayer(const LayerToExport& layer, const std::string& why);

// The value the layer produces from `input`.
Value exportLayer(GraphWriter& g, const LayerToExport& layer, const Value& input);

// The value of `input` reshaped as dl4cpp reshapes it for `preProcessor`: FeedForwardToCnn to
// (N, C, H, W) of `to`, CnnToFeedForward to rows (both views of the same C-order values);
// RnnToFeedForward and RnnToCnn to one row or image per time step (Transpose + Reshape),
// FeedForwardToRnn and CnnToRnn back to sequences with the N and T of the ones cut last.
Value exportPreProcessor(GraphWriter& g, InputPreProcessor preProcessor, const InputType& to,
                         const Value& input, const std::string& base);

}  // namespace dl4cpp::onnx
