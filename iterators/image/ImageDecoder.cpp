#include "iterators/image/ImageDecoder.h"

#include <fmt/format.h>

#include <vector>

#include "iterators/image/ImageFormat.h"
#include "iterators/image/codec/JpegDecoder.h"
#include "iterators/image/codec/PngDecoder.h"
#include "nn/core/AtomicFile.h"
#include "nn/core/Error.h"

namespace dl4cpp {
namespace {

// The format the bytes' signature names; DataTruncatedError or DataFormatError saying what they
// are instead.
ImageFormat requireImageFormat(std::span<const std::byte> bytes, std::string_view name) {
  if (const std::optional<ImageFormat> format = sniffImageFormat(bytes)) return *format;
  if (bytes.empty())
    throw DataTruncatedError(
        fmt::format("{}: empty file (0 bytes), not a PNG or JPEG image", name));
  if (isCutOffSignature(bytes))
    throw DataTruncatedError(fmt::format(
        "{}: truncated image: the file ends after {} bytes, inside the PNG or JPEG signature", name,
        bytes.size()));
  throw DataFormatError(fmt::format("{}: not a PNG or JPEG image: the data looks like {}", name,
                                    describeNonImageBytes(bytes)));
}

}  // namespace

Image ImageDecoder::decode(std::span<const std::byte> bytes, int channels, std::string_view name,
                           DecodeSizeHint hint) {
  if (channels != 1 && channels != 3 && channels != 4)
    throw ConfigError(fmt::format(
        "decoding {}: channels must be 1 (grey), 3 (RGB) or 4 (RGBA), not {}", name, channels));
  if (hint.height < 0 || hint.width < 0)
    throw ConfigError(fmt::format("decoding {}: the size hint {} x {} is negative", name,
                                  hint.height, hint.width));
  const codec::InterleavedSamples samples =
      requireImageFormat(bytes, name) == ImageFormat::Png
          ? codec::decodePng(bytes, name)
          : codec::decodeJpeg(bytes, name, channels == 1, hint);
  return codec::toImage(samples, channels, name);
}

ImageHeader ImageDecoder::readHeader(std::span<const std::byte> bytes, std::string_view name) {
  return requireImageFormat(bytes, name) == ImageFormat::Png ? codec::readPngHeader(bytes, name)
                                                             : codec::readJpegHeader(bytes, name);
}

Image ImageDecoder::decodeFile(const std::filesystem::path& path, int channels,
                               DecodeSizeHint hint) {
  const std::vector<std::byte> bytes = readWholeFile(path, "a PNG or JPEG image");
  return decode(bytes, channels, path.string(), hint);
}

}  // namespace dl4cpp
