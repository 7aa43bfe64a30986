#include "nn/conf/InputType.h"

namespace dl4cpp {

std::string InputType::toString() const {
  if (timeDistributed) {
    InputType each = *this;
    each.timeDistributed = false;
    return each.toString() + " per time step" +
           (length > 0 ? " of " + std::to_string(length) : std::string());
  }
  const std::string hwc =
      std::to_string(height) + "x" + std::to_string(width) + "x" + std::to_string(channels);
  switch (kind) {
    case Kind::FeedForward:
      return "FeedForward(" + std::to_string(size) + ")";
    case Kind::Convolutional:
      return "Convolutional(" + hwc + ")";
    case Kind::ConvolutionalFlat:
      return "ConvolutionalFlat(" + hwc + ")";
    case Kind::Recurrent:
      return "Recurrent(" + std::to_string(size) +
             (length > 0 ? ", " + std::to_string(length) : std::string()) + ")";
  }
  return "?";
}

}  // namespace dl4cpp
