#include "iterators/image/ImageWriter.h"

#include <fmt/format.h>

#include <string>

#include "iterators/image/ImageShape.h"
#include "iterators/image/codec/InterleavedSamples.h"
#include "iterators/image/codec/JpegEncoder.h"
#include "iterators/image/codec/PngEncoder.h"
#include "nn/core/AtomicFile.h"
#include "nn/core/Error.h"
#include "nn/core/OutputPath.h"

namespace dl4cpp {

namespace {

// PNG's and JPEG's largest sides (PNG: 2^31 - 1; JPEG: 65500, libjpeg's JPEG_MAX_DIMENSION).
constexpr int kMaxPngSide = 0x7fffffff;
constexpr int kMaxJpegSide = 65500;

void checkImage(const Image& image, const char* format, int maxSide) {
  checkImageShape(image, fmt::format("writing a {}", format));
  if (image.height > maxSide || image.width > maxSide)
    throw ShapeError(fmt::format("writing a {}: {} x {} is larger than the format's {} a side",
                                 format, image.height, image.width, maxSide));
}

}  // namespace

std::vector<std::byte> ImageWriter::encodePng(const Image& image, int bitDepth) {
  checkImage(image, "PNG", kMaxPngSide);
  if (image.channels > 4)
    throw ConfigError(fmt::format(
        "writing a PNG: {} channels; PNG holds 1 (grey), 2 (grey+alpha), 3 (RGB) or 4 (RGBA)",
        image.channels));
  if (bitDepth != 8 && bitDepth != 16)
    throw ConfigError(fmt::format("writing a PNG: bit depth {}; 8 or 16 are written", bitDepth));
  return codec::encodePng(codec::fromImage(image, bitDepth, "PNG image"), "PNG image");
}

std::vector<std::byte> ImageWriter::encodeJpeg(const Image& image, int quality) {
  checkImage(image, "JPEG", kMaxJpegSide);
  if (image.channels != 1 && image.channels != 3)
    throw ConfigError(fmt::format(
        "writing a JPEG: {} channels; JPEG holds 1 (grey) or 3 (RGB), no alpha", image.channels));
  if (quality < 1 || quality > 100)
    throw ConfigError(fmt::format("writing a JPEG: quality {} is not in 1 to 100", quality));
  return codec::encodeJpeg(codec::fromImage(image, 8, "JPEG image"), quality, "JPEG image");
}

void ImageWriter::writePng(const Image& image, const std::filesystem::path& path, int bitDepth) {
  checkOutputPath(path, "a PNG image");
  writeFileAtomically(path, encodePng(image, bitDepth), "a PNG image");
}

void ImageWriter::writeJpeg(const Image& image, const std::filesystem::path& path, int quality) {
  checkOutputPath(path, "a JPEG image");
  writeFileAtomically(path, encodeJpeg(image, quality), "a JPEG image");
}

}  // namespace dl4cpp
