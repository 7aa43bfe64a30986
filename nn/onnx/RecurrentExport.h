#pragma once
// dl4cpp's recurrent layers as ONNX's LSTM and RNN operators: LSTM, GravesLSTM (ONNX's
// peepholes), SimpleRnn (RNN), Bidirectional around any of them (direction "bidirectional", its
// two outputs combined as the layer's mode combines them) and LastTimeStep around any recurrent
// layer (its last step sliced off). Sequences are (N, F, T) on both sides, as dl4cpp holds them;
// the operators read and write ONNX's step-major layouts between Transposes. Private to nn/onnx.
#include <string>

#include "nn/onnx/GraphWriter.h"
#include "nn/onnx/LayerExport.h"

namespace dl4cpp::onnx {

// Whether the layer type is one exportRecurrent() writes.
bool isRecurrentType(const std::string& typeName);

// The layer's output for sequences `x`: (N, nOut, T), or (N, nOut) from LastTimeStep.
std::string exportRecurrent(GraphWriter& g, const LayerToExport& l, const std::string& x);

}  // namespace dl4cpp::onnx
