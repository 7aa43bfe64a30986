#include "iterators/image/transform/CropRegion.h"

#include <algorithm>
#include <cstddef>

namespace dl4cpp {

namespace {

// Where sample (c, y, x) of a CHW image lies in its pixels.
size_t sampleIndex(const Image& image, int c, int y, int x) {
  return (static_cast<size_t>(c) * static_cast<size_t>(image.height) + static_cast<size_t>(y)) *
             static_cast<size_t>(image.width) +
         static_cast<size_t>(x);
}

}  // namespace

Image cropRegion(const Image& image, int top, int left, int height, int width) {
  Image out(image.channels, height, width);
  for (int c = 0; c < image.channels; ++c)
    for (int y = 0; y < height; ++y)
      std::copy_n(
          image.pixels.begin() + static_cast<std::ptrdiff_t>(sampleIndex(image, c, top + y, left)),
          width, &out.at(c, y, 0));
  return out;
}

}  // namespace dl4cpp
