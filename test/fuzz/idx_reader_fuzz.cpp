// libFuzzer target for the IDX reader (scripts/fuzz.sh idx_reader_fuzz builds and runs it): every
// input is read as images and labels, raw and gzip (IdxReaderFuzzInput.h). Only dl4cpp::Error may
// come out; anything else, and any sanitizer report, is a crash.
#include <cstddef>
#include <cstdint>
#include <span>

#include "IdxReaderFuzzInput.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dl4cpp::fuzz::readIdxInput(std::span<const uint8_t>(data, size));
  return 0;
}
