#pragma once
// decodePng: a PNG file's samples, as InterleavedSamples: a palette expanded to RGB, grey below 8
// bits widened to 8, tRNS transparency turned into an alpha channel, Adam7 interlacing undone; 8
// and 16 bits kept. readPngHeader: the size its header states, without decoding the image. Errors
// as ImageDecoder.h says, naming `name`.
#include <cstddef>
#include <span>
#include <string_view>

#include "iterators/image/ImageDecoder.h"
#include "iterators/image/codec/InterleavedSamples.h"

namespace dl4cpp::codec {

InterleavedSamples decodePng(std::span<const std::byte> bytes, std::string_view name);
ImageHeader readPngHeader(std::span<const std::byte> bytes, std::string_view name);

}  // namespace dl4cpp::codec
