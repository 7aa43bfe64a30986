#pragma once
// The checks the image transforms share: their parameters when constructed (ConfigError naming
// the transform and the parameter) and the image they are handed (DataMismatchError).
#include <string_view>

#include "iterators/image/Image.h"

namespace dl4cpp {

// The largest crop margin, crop side or size change (pixels) a transform accepts: far beyond any
// real image, and small enough that a typo cannot ask for an image of terabytes.
constexpr int kMaxTransformPixels = 1 << 16;

// ConfigError unless value is finite and >= 0.
void requireNonNegative(std::string_view transform, std::string_view parameter, double value);
// ConfigError unless lowest <= value <= kMaxTransformPixels.
void requirePixelCount(std::string_view transform, std::string_view parameter, double value,
                       int lowest);
// DataMismatchError unless the image has at least one sample and as many as its shape says.
void requireImage(const Image& image, std::string_view transform);

}  // namespace dl4cpp
