#pragma once
// What the model-loader fuzz target does with one input, shared with the CTest that replays the
// committed corpus (test/nn/util/ModelLoaderCorpusTest.cpp), so both exercise the same path.
//
// Each input is read twice through ModelSerializer::restoreFromBytes: as given (the header,
// length and checksum checks) and, when it is long enough to have a version-1 header, as a copy
// whose header and section checksums have been recomputed. Random mutations almost never keep a
// CRC32 valid, so without the repaired copy the fuzzer would hardly ever get past the checksums
// into the section parsing, the configuration JSON and the consistency checks.
//
// The contract under test: only dl4cpp::Error may escape, and what loads is whole: a network whose
// buffers match its configuration, and a normalizer (when the file has one) that applies to the
// network's input and maps it (zeros) to finite values. Any other exception is rethrown
// (under libFuzzer: an uncaught exception, a crash); memory errors are the sanitizers' to report.
#include <zlib.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>
#include <vector>

#include "nn/core/Error.h"
#include "nn/util/ModelSerializer.h"

namespace dl4cpp::fuzz {

// Little-endian helpers over a buffer whose bounds the caller has checked.
inline uint64_t loadLe(const std::vector<std::byte>& b, size_t at, int n) {
  uint64_t v = 0;
  for (int i = n; i-- > 0;) v = (v << 8) | static_cast<uint8_t>(b[at + static_cast<size_t>(i)]);
  return v;
}
inline void storeLe(std::vector<std::byte>& b, size_t at, uint64_t v, int n) {
  for (int i = 0; i < n; ++i)
    b[at + static_cast<size_t>(i)] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}
inline uint32_t crcOf(const std::vector<std::byte>& b, size_t at, size_t n) {
  return static_cast<uint32_t>(::crc32_z(0, reinterpret_cast<const Bytef*>(b.data() + at), n));
}

// A copy of `bytes` with the version-1 header CRC and every section CRC recomputed, as far as
// the section lengths stay inside the buffer (docs/model-format.md).
inline std::vector<std::byte> withRepairedChecksums(std::span<const std::byte> bytes) {
  std::vector<std::byte> b(bytes.begin(), bytes.end());
  constexpr size_t kHeader = 20, kSectionHeader = 16;
  if (b.size() < kHeader) return b;
  storeLe(b, 16, crcOf(b, 0, 16), 4);
  size_t at = kHeader;
  while (b.size() - at >= kSectionHeader) {
    const uint64_t length = loadLe(b, at + 4, 8);
    if (length > b.size() - at - kSectionHeader) break;
    storeLe(b, at + 12, crcOf(b, at + kSectionHeader, static_cast<size_t>(length)), 4);
    at += kSectionHeader + static_cast<size_t>(length);
  }
  return b;
}

// Throws std::logic_error unless `normalizer` maps a batch of the network's input (zeros) to
// finite values without an error. (Finite inputs far from the fitted data may rightly overflow.)
inline void requireUsable(const DataNormalization& normalizer, const InputType& input) {
  Tensor features(Shape{2, input.flatSize()});
  features.fill(0.0f);
  try {
    normalizer.transformInput(features, input);
  } catch (const Error& e) {
    throw std::logic_error(std::string("a loaded normalizer refuses the network's input: ") +
                           e.what());
  }
  for (float v : features.toVector())
    if (!std::isfinite(v)) throw std::logic_error("a loaded normalizer gives a non-finite value");
}

// Restores `bytes`; a dl4cpp::Error is an accepted outcome. Returns the number of inputs (of the
// two) that loaded as a model.
inline int loadModelInput(std::span<const std::byte> bytes) {
  int loaded = 0;
  auto attempt = [&](std::span<const std::byte> input) {
    std::optional<ModelAndNormalizer> restored;
    try {
      restored.emplace(
          ModelSerializer::restoreModelAndNormalizerFromBytes(input, true, "<fuzz input>"));
    } catch (const Error&) {
      return;
    }
    // What loads must be whole: the network's buffers match its configuration, the normalizer
    // applies to its input.
    const MultiLayerNetwork& model = restored->model;
    if (model.params().numel() != model.numParams()) throw std::logic_error("inconsistent model");
    if (restored->normalizer)
      requireUsable(*restored->normalizer, model.getConfiguration().inputType);
    ++loaded;
  };
  attempt(bytes);
  const std::vector<std::byte> repaired = withRepairedChecksums(bytes);
  attempt(repaired);
  return loaded;
}

}  // namespace dl4cpp::fuzz
