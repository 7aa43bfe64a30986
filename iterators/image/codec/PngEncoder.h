#pragma once
// encodePng: interleaved samples (1 to 4 channels, 8 or 16 bits) as the bytes of a PNG file,
// libpng's default compression, not interlaced. AllocationError when memory runs out, ConfigError
// with libpng's reason when it refuses the image; `what` names it in the message.
#include <cstddef>
#include <string_view>
#include <vector>

#include "iterators/image/codec/InterleavedSamples.h"

namespace dl4cpp::codec {

std::vector<std::byte> encodePng(const InterleavedSamples& samples, std::string_view what);

}  // namespace dl4cpp::codec
