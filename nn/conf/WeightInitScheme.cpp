#include "nn/conf/WeightInitScheme.h"

#include <fmt/format.h>

#include <cmath>

namespace dl4cpp {

std::string Distribution::problem() const {
  if (kind == Kind::NORMAL) {
    if (!std::isfinite(first)) return fmt::format("mean must be finite, got {}", first);
    if (!(second >= 0) || !std::isfinite(second))
      return fmt::format("std must be finite and >= 0, got {}", second);
    return "";
  }
  if (!std::isfinite(first) || !std::isfinite(second) || !(first < second))
    return fmt::format("lower and upper must be finite with lower < upper, got {} and {}", first,
                       second);
  return "";
}

std::string Distribution::toString() const {
  return kind == Kind::NORMAL
             ? fmt::format("NormalDistribution(mean={}, std={})", first, second)
             : fmt::format("UniformDistribution(lower={}, upper={})", first, second);
}

std::string WeightInitScheme::toString() const {
  return named() ? dl4cpp::toString(*named()) : distribution()->toString();
}

}  // namespace dl4cpp
