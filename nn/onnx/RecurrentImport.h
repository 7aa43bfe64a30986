#pragma once
// The parameters of dl4cpp's recurrent layers from the weights of one direction of ONNX's LSTM or
// RNN operator (the inverse of RecurrentExport's layouts). Private to nn/onnx.
#include <cstdint>
#include <span>
#include <vector>

namespace dl4cpp::onnx {

enum class RecurrentCell {
  Lstm,        // ONNX's LSTM without peepholes: dl4cpp's LSTM
  GravesLstm,  // ONNX's LSTM with peepholes P: dl4cpp's GravesLSTM
  SimpleRnn,   // ONNX's RNN: dl4cpp's SimpleRnn
};

// One direction's weights in ONNX's layouts: W (G*H, F), R (G*H, H), B (2*G*H: the input biases,
// then the recurrent ones), P (3H, LSTM's peepholes [i | o | f]) or empty; G = 4 for an LSTM, 1 for
// an RNN.
struct OnnxRecurrentWeights {
  int64_t inputSize = 0, hiddenSize = 0;
  std::span<const float> w, r, b, p;
};

// The layer's parameters in dl4cpp's (DL4J's) order and layout: W, RW (GravesLSTM's with its
// peephole columns wFF, wOO, wGG), b (ONNX's two biases summed).
std::vector<float> dl4cppRecurrentParams(RecurrentCell cell, const OnnxRecurrentWeights& onnx);

}  // namespace dl4cpp::onnx
