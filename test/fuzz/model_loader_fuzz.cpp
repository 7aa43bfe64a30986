// libFuzzer target for the model-file reader (scripts/fuzz.sh model_loader_fuzz builds and runs
// it): every input goes through ModelSerializer::restoreFromBytes, the entry point the file reader
// uses. Only dl4cpp::Error may come out; anything else, and any sanitizer report, is a crash.
#include <cstddef>
#include <cstdint>
#include <span>

#include "ModelLoaderFuzzInput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dl4cpp::fuzz::loadModelInput(
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(data), size));
  return 0;
}
