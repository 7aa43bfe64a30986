#pragma once
// InputType: what flows between layers, as DL4J's InputType. The network uses it to infer each
// layer's nIn and to insert the reshapes between flat and image data (both are views: NCHW data
// flattened in C order is exactly DL4J's CnnToFeedForward / FeedForwardToCnn layout).
#include <cstdint>
#include <string>

#include "nn/tensor/Shape.h"

namespace dl4cpp {

struct InputType {
  enum class Kind { FeedForward, Convolutional, ConvolutionalFlat };
  Kind kind = Kind::FeedForward;
  int64_t size = 0;                             // FeedForward
  int64_t height = 0, width = 0, channels = 0;  // Convolutional(+Flat)

  static InputType feedForward(int64_t size) { return {Kind::FeedForward, size, 0, 0, 0}; }
  static InputType convolutional(int64_t height, int64_t width, int64_t channels) {
    return {Kind::Convolutional, 0, height, width, channels};
  }
  // Images given as rows of height*width*channels values (MNIST's 784 columns).
  static InputType convolutionalFlat(int64_t height, int64_t width, int64_t channels) {
    return {Kind::ConvolutionalFlat, 0, height, width, channels};
  }

  // Values per example.
  int64_t flatSize() const { return kind == Kind::FeedForward ? size : height * width * channels; }
  // The per-batch tensor shape a layer of this input sees: (N, size) or (N, C, H, W).
  Shape shape(int64_t batch) const {
    if (kind == Kind::Convolutional) return {batch, channels, height, width};
    return {batch, flatSize()};
  }
  std::string toString() const;
};

}  // namespace dl4cpp
