// libFuzzer target for the ONNX importer (scripts/fuzz.sh onnx_import_fuzz builds and runs it):
// every input goes through dl4cpp::onnx::importModelFromBytes, the path importModel reads a file
// through. Only dl4cpp::Error may come out; anything else, and any sanitizer report, is a crash.
#include <cstddef>
#include <cstdint>
#include <span>

#include "OnnxImportFuzzInput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dl4cpp::fuzz::importOnnxInput(
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(data), size));
  return 0;
}
