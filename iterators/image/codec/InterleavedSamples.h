#pragma once
// InterleavedSamples: the pixels as libpng and libjpeg take and give them, between an Image and a
// file: rows of interleaved samples, 1 (grey), 2 (grey, alpha), 3 (RGB) or 4 (RGBA) a pixel,
// 8-bit, or 16-bit in big-endian byte order (PNG's). toImage applies ImageDecoder's channel rules,
// fromImage ImageWriter's rounding.
// Internal to the codecs (iterators/image/codec is not installed).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "iterators/image/Image.h"

namespace dl4cpp::codec {

struct InterleavedSamples {
  int height = 0;
  int width = 0;
  int channels = 0;  // samples a pixel
  int bitDepth = 8;  // 8 or 16
  size_t rowBytes = 0;
  std::unique_ptr<uint8_t[]> data;  // height rows of rowBytes

  // Mutable through a const object, as data is: libpng's and libjpeg's row pointers are not const.
  uint8_t* row(int y) const { return data.get() + static_cast<size_t>(y) * rowBytes; }
};

// DataFormatError naming `name` when a `format` image of width x height is over ImageDecoder's
// limits (or empty).
void checkImageSize(int64_t width, int64_t height, std::string_view name, std::string_view format);

// Rows for an image of that size (within the limits), `rowBytes` each, left uninitialised: the
// decoder fills them as the data arrives, so a header that claims a large image costs address
// space, not memory, until its data is there. AllocationError naming `name` when they cannot be
// had.
InterleavedSamples allocateSamples(int height, int width, int channels, int bitDepth,
                                   size_t rowBytes, std::string_view name);

// The Image with `channels` (1, 3 or 4) planes, by ImageDecoder's rules.
Image toImage(const InterleavedSamples& samples, int channels, std::string_view name);

// The image's samples (its channels interleaved) at `bitDepth` 8 or 16: rounded to the nearest
// integer and clamped to [0, 255] (NaN to 0), times 257 (65535 / 255) for 16 bits.
InterleavedSamples fromImage(const Image& image, int bitDepth, std::string_view what);

}  // namespace dl4cpp::codec
