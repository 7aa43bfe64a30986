#pragma once
// UniformRange: the interval [min, max] a transform draws one of its parameters from, uniformly,
// as MATLAB's imageDataAugmenter takes its ranges (RandRotation = [-15 15], RandScale =
// [0.9 1.1]). min == max is a fixed value, drawn exactly: the way to ask for a deterministic
// transform (a 90 degree rotation, a 2-pixel shift).
#include <string_view>

#include "iterators/image/ExampleRandom.h"

namespace dl4cpp {

struct UniformRange {
  double min = 0.0;
  double max = 0.0;

  // [-extent, extent]: DataVec's "maximum deviation" parameters. ConfigError naming `transform` and
  // `parameter` unless extent is finite and >= 0.
  static UniformRange symmetric(std::string_view transform, std::string_view parameter,
                                double extent);
  // [1 - extent, 1 + extent]: DataVec's "maximum scaling (relative to 1)", a factor that stays
  // positive. ConfigError naming `transform` and `parameter` unless extent is in [0, 1).
  static UniformRange aroundOne(std::string_view transform, std::string_view parameter,
                                double extent);

  // One draw; always exactly one value from `random`, so a fixed range costs the same draws.
  double draw(ExampleRandom& random) const { return random.uniform(min, max); }

  enum class Bound { Any, NonNegative, Positive };
  // ConfigError naming `transform` and `parameter` unless min and max are finite, min <= max and
  // min is within `bound`.
  void validate(std::string_view transform, std::string_view parameter,
                Bound bound = Bound::Any) const;
};

}  // namespace dl4cpp
