#pragma once
// encodeJpeg: 8-bit interleaved samples, grey (1 channel) or RGB (3), as the bytes of a baseline
// JPEG file at `quality` (1 to 100), with libjpeg's defaults (YCbCr, chroma halved both ways).
// AllocationError when memory runs out, ConfigError with libjpeg's reason when it refuses the
// image; `what` names it in the message.
#include <cstddef>
#include <string_view>
#include <vector>

#include "iterators/image/codec/InterleavedSamples.h"

namespace dl4cpp::codec {

std::vector<std::byte> encodeJpeg(const InterleavedSamples& samples, int quality,
                                  std::string_view what);

}  // namespace dl4cpp::codec
