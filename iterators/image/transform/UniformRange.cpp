#include "iterators/image/transform/UniformRange.h"

#include <fmt/format.h>

#include <cmath>

#include "iterators/image/transform/ImageTransformChecks.h"
#include "nn/core/Error.h"

namespace dl4cpp {

UniformRange UniformRange::symmetric(std::string_view transform, std::string_view parameter,
                                     double extent) {
  requireNonNegative(transform, parameter, extent);
  return {-extent, extent};
}

UniformRange UniformRange::aroundOne(std::string_view transform, std::string_view parameter,
                                     double extent) {
  if (!(extent >= 0 && extent < 1))
    throw ConfigError(
        fmt::format("{}: {} = {} must be in [0, 1) (the factor is drawn from [1 - {}, 1 + {}])",
                    transform, parameter, extent, parameter, parameter));
  return {1.0 - extent, 1.0 + extent};
}

void UniformRange::validate(std::string_view transform, std::string_view parameter,
                            Bound bound) const {
  const bool inBound = bound == Bound::Any || (bound == Bound::NonNegative && min >= 0) ||
                       (bound == Bound::Positive && min > 0);
  if (!std::isfinite(min) || !std::isfinite(max) || min > max || !inBound)
    throw ConfigError(fmt::format("{}: {} range [{}, {}] must be finite with min <= max{}",
                                  transform, parameter, min, max,
                                  bound == Bound::NonNegative ? " and min >= 0"
                                  : bound == Bound::Positive  ? " and min > 0"
                                                              : ""));
}

}  // namespace dl4cpp
