#include "server/PixelRange.h"

#include <fmt/format.h>

#include <stdexcept>

namespace samples::server {

std::string_view pixelRangeName(PixelRange range) {
  return range == PixelRange::UNIT ? "0-1" : "0-255";
}

PixelRange parsePixelRange(std::string_view name) {
  if (name == pixelRangeName(PixelRange::UNIT)) return PixelRange::UNIT;
  if (name == pixelRangeName(PixelRange::LEVELS)) return PixelRange::LEVELS;
  throw std::invalid_argument(fmt::format(
      "--pixel-range must be '0-1' (grey level / 255) or '0-255' (grey levels as they are), got "
      "'{}'",
      name));
}

float pixelFeature(double level, PixelRange range) {
  return static_cast<float>(range == PixelRange::UNIT ? level / 255.0 : level);
}

}  // namespace samples::server
