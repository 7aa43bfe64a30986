// libFuzzer target for the PNG and JPEG decoders (scripts/fuzz.sh image_decoder_fuzz builds and
// runs it): every input is decoded as ImageDecoderFuzzInput.h says. Only dl4cpp::Error may come
// out; anything else, and any sanitizer report, is a crash.
#include <cstddef>
#include <cstdint>
#include <span>

#include "ImageDecoderFuzzInput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dl4cpp::fuzz::decodeImageInput(std::span<const uint8_t>(data, size));
  return 0;
}
