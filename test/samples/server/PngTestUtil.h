#pragma once
// Encodes test images as PNG in memory (the library's ImageWriter), as request bodies.
#include <string>
#include <vector>

#include "iterators/image/ImageWriter.h"

namespace testutil {

// `pixels`: width*height*channels bytes, row by row, a pixel's channels together (1 grey,
// 2 grey+alpha, 3 RGB, 4 RGBA).
inline std::string encodePng(const std::vector<unsigned char>& pixels, int width, int height,
                             int channels = 1) {
  dl4cpp::Image image(channels, height, width);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      for (int c = 0; c < channels; ++c)
        image.at(c, y, x) = pixels[static_cast<size_t>((y * width + x) * channels + c)];
  const std::vector<std::byte> png = dl4cpp::ImageWriter::encodePng(image);
  return {reinterpret_cast<const char*>(png.data()), png.size()};
}

}  // namespace testutil
