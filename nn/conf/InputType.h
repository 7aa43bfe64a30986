#pragma once
// InputType: what flows between layers, as DL4J's InputType. The network uses it to infer each
// layer's nIn and to insert the reshapes between flat and image data (both are views: NCHW data
// flattened in C order is exactly DL4J's CnnToFeedForward / FeedForwardToCnn layout).
// Sequences are Recurrent: (N, size, T) as in DL4J, with T fixed by `length` or, when it is 0,
// taken from each batch (sequences of any length). Rows or images that a preprocessor cut out of
// sequences, one per time step (DL4J's RnnToFeedForwardPreProcessor), are `timeDistributed`:
// N*T of them, (example, step) in that order, with T as `length` says.
#include <cstdint>
#include <string>

#include "nn/tensor/Shape.h"

namespace dl4cpp {

struct InputType {
  enum class Kind { FeedForward, Convolutional, ConvolutionalFlat, Recurrent };
  Kind kind = Kind::FeedForward;
  int64_t size = 0;                             // FeedForward; Recurrent: features per step
  int64_t height = 0, width = 0, channels = 0;  // Convolutional(+Flat)
  int64_t length = 0;  // Recurrent and timeDistributed: time steps, 0 for any
  // FeedForward and Convolutional: one row or image per time step of sequences (DL4J's
  // timeDistributedFormat), which layers process as a batch of N*T examples.
  bool timeDistributed = false;

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
  // `perExample` (rows or images) for each of the steps of sequences of `length` steps (0: the
  // batch's).
  static InputType perTimeStep(InputType perExample, int64_t length) {
    perExample.timeDistributed = true;
    perExample.length = length;
    return perExample;
  }
  // The steps of sequences of `steps` (the batch's) that this type's length fixes or leaves.
  int64_t stepsOf(int64_t steps) const { return length > 0 ? length : steps; }

  // The per-batch tensor shape a layer of this input sees: (N, size), (N, C, H, W), or
  // (N, size, T) with T = length, or `steps` (the batch's) when length is 0; timeDistributed rows
  // and images have N*T of them.
  Shape shape(int64_t batch, int64_t steps = 0) const {
    if (timeDistributed) batch *= stepsOf(steps);
    if (kind == Kind::Convolutional) return {batch, channels, height, width};
    if (kind == Kind::Recurrent) return {batch, size, stepsOf(steps)};
    return {batch, flatSize()};
  }
  std::string toString() const;
};

}  // namespace dl4cpp
