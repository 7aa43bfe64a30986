#include "nn/conf/InputType.h"

namespace dl4cpp {

namespace {

// `t` without its per-time-step suffix.
std::string describeKind(const InputType& t) {
  const std::string hwc =
      std::to_string(t.height) + "x" + std::to_string(t.width) + "x" + std::to_string(t.channels);
  switch (t.kind) {
    case InputType::Kind::FeedForward:
      return "FeedForward(" + std::to_string(t.size) + ")";
    case InputType::Kind::Convolutional:
      return "Convolutional(" + hwc + ")";
    case InputType::Kind::ConvolutionalFlat:
      return "ConvolutionalFlat(" + hwc + ")";
    case InputType::Kind::Recurrent:
      return "Recurrent(" + std::to_string(t.size) +
             (t.length > 0 ? ", " + std::to_string(t.length) : std::string()) + ")";
  }
  return "?";
}

}  // namespace

std::string InputType::toString() const {
  if (!timeDistributed) return describeKind(*this);
  return describeKind(*this) + " per time step" +
         (length > 0 ? " of " + std::to_string(length) : std::string());
}

}  // namespace dl4cpp
