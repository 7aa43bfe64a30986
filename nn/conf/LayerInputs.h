#pragma once
// What both configuration builders (NeuralNetConfiguration's list builder and
// ComputationGraphConfiguration's graph builder) decide the same way about a layer's input: the
// reshape a layer needs before it (DL4J adds its InputPreProcessors the same way), and the size
// limits of every type that flows between layers. Not installed: the builders' own business.
#include <string>

#include "nn/conf/InputType.h"
#include "nn/conf/NeuralNetConfiguration.h"
#include "nn/conf/layers/Layer.h"

namespace dl4cpp {

// ConfigError unless `type` is within the limits that keep the layers' size arithmetic exact.
// `what` names it in the message ("the input type", "layer 2 (ConvolutionLayer) output").
void checkInputTypeSizes(const InputType& type, const std::string& what);

// The reshape `layer` needs before it when it receives `current`; sets `current` to what the
// layer then consumes. `where` names the layer in errors ("layer 2 (DenseLayer)"): ConfigError
// when the layer needs images and receives rows.
InputPreProcessor preProcessorFor(const Layer& layer, InputType& current, const std::string& where);

// The RnnToCnn preprocessor asked for before `layer` (named `where` in errors): sets `current`
// (sequences of h*w*c features) to one image per time step; ConfigError when it does not fit.
InputPreProcessor rnnToCnn(const Layer& layer, const RnnToCnnPreProcessor& images,
                           InputType& current, const std::string& where);

// ConfigError unless truncated BPTT's lengths are valid: a forward length in 1..kMaxExtent and a
// backward length in 1..forward length.
void checkTruncatedBpttLengths(int64_t forwardLength, int64_t backwardLength);

// What a layer that consumes `input` produces, given the `output` its resolve() returned: a layer
// fed one row or image per time step makes one per time step.
InputType layerOutputType(const InputType& input, const InputType& output);

}  // namespace dl4cpp
