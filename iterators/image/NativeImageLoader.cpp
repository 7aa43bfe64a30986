#include "iterators/image/NativeImageLoader.h"

#include <fmt/format.h>

#include <algorithm>

#include "iterators/image/ImageDecoder.h"
#include "iterators/image/ImageResize.h"
#include "nn/core/Error.h"

namespace dl4cpp {

NativeImageLoader::NativeImageLoader(int height, int width, int channels)
    : height_(height), width_(width), channels_(channels) {
  if (height < 1 || width < 1)
    throw ConfigError(fmt::format("NativeImageLoader: height and width must be >= 1, got {} x {}",
                                  height, width));
  if (channels != 1 && channels != 3 && channels != 4)
    throw ConfigError(
        fmt::format("NativeImageLoader: channels must be 1, 3 or 4, got {}", channels));
}

Tensor NativeImageLoader::asMatrix(const std::filesystem::path& file) const {
  Image image = ImageDecoder::decodeFile(file, channels_, {height_, width_});
  if (image.height != height_ || image.width != width_) image = resize(image, height_, width_);
  Tensor matrix({1, channels_, height_, width_});
  std::copy(image.pixels.begin(), image.pixels.end(), matrix.data());
  return matrix;
}

}  // namespace dl4cpp
