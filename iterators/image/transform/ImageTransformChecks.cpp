#include "iterators/image/transform/ImageTransformChecks.h"

#include <fmt/format.h>

#include <cmath>
#include <cstddef>

#include "nn/core/Error.h"

namespace dl4cpp {

void requireNonNegative(std::string_view transform, std::string_view parameter, double value) {
  if (!std::isfinite(value) || value < 0)
    throw ConfigError(
        fmt::format("{}: {} = {} must be finite and >= 0", transform, parameter, value));
}

void requirePixelCount(std::string_view transform, std::string_view parameter, double value,
                       int lowest) {
  if (!(value >= lowest && value <= kMaxTransformPixels))
    throw ConfigError(fmt::format("{}: {} = {} must be in [{}, {}] pixels", transform, parameter,
                                  value, lowest, kMaxTransformPixels));
}

void requireImage(const Image& image, std::string_view transform) {
  const bool positive = image.channels > 0 && image.height > 0 && image.width > 0;
  if (!positive || image.pixels.size() != static_cast<size_t>(image.channels) *
                                              static_cast<size_t>(image.height) *
                                              static_cast<size_t>(image.width))
    throw DataMismatchError(fmt::format(
        "{}: the image is {} channels x {} x {} with {} samples; expected a non-empty image with "
        "channels * height * width samples",
        transform, image.channels, image.height, image.width, image.pixels.size()));
}

}  // namespace dl4cpp
