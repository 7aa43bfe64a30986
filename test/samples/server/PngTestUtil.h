#pragma once
// Encodes test images as PNG in memory (libpng's simplified writer).
#include <png.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace testutil {

// `pixels`: width*height*channels bytes, row by row; format e.g. PNG_FORMAT_GRAY, PNG_FORMAT_RGBA.
inline std::string encodePng(const std::vector<unsigned char>& pixels, unsigned width,
                             unsigned height, unsigned format) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = width;
  image.height = height;
  image.format = format;
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&image, nullptr, &size, 0, pixels.data(), 0, nullptr))
    throw std::runtime_error(image.message);
  std::string png(size, '\0');
  if (!png_image_write_to_memory(&image, png.data(), &size, 0, pixels.data(), 0, nullptr))
    throw std::runtime_error(image.message);
  png.resize(size);
  return png;
}

}  // namespace testutil
