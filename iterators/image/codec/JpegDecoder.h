#pragma once
// decodeJpeg: a JPEG file's samples, as InterleavedSamples of 8 bits: grey (1 sample a pixel) for a
// grey file, or when `grey` asks for it (a YCbCr file's Y plane, libjpeg's luma of an RGB one);
// RGB (3) otherwise, CMYK and YCCK converted without colour management. Decoded at the smallest
// DCT scale that gives at least the hinted size. readJpegHeader: the size its header states (the
// file's, not a scaled one), without decoding the image. Errors as ImageDecoder.h says, naming
// `name`.
#include <cstddef>
#include <span>
#include <string_view>

#include "iterators/image/ImageDecoder.h"
#include "iterators/image/codec/InterleavedSamples.h"

namespace dl4cpp::codec {

InterleavedSamples decodeJpeg(std::span<const std::byte> bytes, std::string_view name, bool grey,
                              DecodeSizeHint hint);
ImageHeader readJpegHeader(std::span<const std::byte> bytes, std::string_view name);

}  // namespace dl4cpp::codec
