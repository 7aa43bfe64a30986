#include "iterators/image/ImageShape.h"

#include <fmt/format.h>

#include <cstdint>
#include <new>

#include "nn/core/Error.h"
#include "nn/core/HostMemory.h"

namespace dl4cpp {

Image allocateImage(int channels, int height, int width, std::string_view what) {
  auto fail = [&](const std::string& why) {
    return AllocationError(fmt::format("{}: cannot allocate an image of {} x {} x {} floats: {}",
                                       what, channels, height, width, why));
  };
  uint64_t bytes = sizeof(float);
  for (const int side : {channels, height, width})
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(side), &bytes))
      throw fail("more bytes than a 64-bit size can count");
  if (bytes > hostMemoryBytes())
    throw fail(fmt::format("{} bytes, more than this machine's {} bytes of RAM and swap", bytes,
                           hostMemoryBytes()));
  try {
    return Image(channels, height, width);
  } catch (const std::bad_alloc&) {
    throw fail(fmt::format("{} bytes: out of memory", bytes));
  }
}

void checkImageShape(const Image& image, std::string_view what) {
  if (image.channels < 1 || image.height < 1 || image.width < 1 ||
      image.pixels.size() != static_cast<size_t>(image.channels) *
                                 static_cast<size_t>(image.height) *
                                 static_cast<size_t>(image.width))
    throw ShapeError(fmt::format(
        "{}: the image's {} samples do not make {} channels of {} x {} (at least 1 each)", what,
        image.pixels.size(), image.channels, image.height, image.width));
}

}  // namespace dl4cpp
