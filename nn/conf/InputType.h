#pragma once
// InputType: what flows between layers, as DL4J's InputType. The network uses it to infer each
// layer's nIn and to insert the reshapes between flat and image data (both are views: NCHW data
// flattened in C order is exactly DL4J's CnnToFeedForward / FeedForwardToCnn layout).
// Sequences are Recurrent: (N, size, T) as in DL4J, with T fixed by `length` or, when it is 0,
// taken from each batch (sequences of any length).
#include <cstdint>
#include <string>

#include "nn/tensor/Shape.h"

namespace dl4cpp {

struct InputType {
  enum class Kind { FeedForward, Convolutional, ConvolutionalFlat, Recurrent };
  Kind kind = Kind::FeedForward;
  int64_t size = 0;                             // FeedForward; Recurrent: features per step
  int64_t height = 0, width = 0, channels = 0;  // Convolutional(+Flat)
  int64_t length = 0;                           // Recurrent: time steps, 0 for any

  static InputType feedForward(int64_t size) { return {Kind::FeedForward, size, 0, 0, 0}; }
  static InputType convolutional(int64_t height, int64_t width, int64_t channels) {
    return {Kind::Convolutional, 0, height, width, channels};
  }
  // Images given as rows of height*width*channels values (MNIST's 784 columns).
  static InputType convolutionalFlat(int64_t height, int64_t width, int64_t channels) {
    return {Kind::ConvolutionalFlat, 0, height, width, channels};
  }

  // DL4J's InputType.recurrent(size[, timeSeriesLength]): sequences (N, size, T).
  static InputType recurrent(int64_t size, int64_t length = 0) {
    return {Kind::Recurrent, size, 0, 0, 0, length};
  }

  // Values per example (per time step for Recurrent).
  int64_t flatSize() const {
    return kind == Kind::FeedForward || kind == Kind::Recurrent ? size : height * width * channels;
  }
  // The per-batch tensor shape a layer of this input sees: (N, size), (N, C, H, W), or
  // (N, size, T) with T = length, or `steps` (the batch's) when length is 0.
  Shape shape(int64_t batch, int64_t steps = 0) const {
    if (kind == Kind::Convolutional) return {batch, channels, height, width};
    if (kind == Kind::Recurrent) return {batch, size, length > 0 ? length : steps};
    return {batch, flatSize()};
  }
  std::string toString() const;
};

}  // namespace dl4cpp
