#include "iterators/DataNormalization.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace dl4cpp {

void requireTargetRange(const std::string& who, double minRange, double maxRange) {
  constexpr double kFloatMax = std::numeric_limits<float>::max();
  const bool finite = std::isfinite(minRange) && std::isfinite(maxRange) &&
                      std::abs(minRange) <= kFloatMax && std::abs(maxRange) <= kFloatMax &&
                      maxRange - minRange <= kFloatMax;
  if (!finite || !(minRange < maxRange))
    throw ConfigError(fmt::format(
        "{}: the target range [{}, {}] must have min < max, with both ends and its width finite "
        "as floats",
        who, minRange, maxRange));
}

}  // namespace dl4cpp
