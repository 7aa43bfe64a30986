#pragma once
// What the image-decoder fuzz target does with one input, shared with the CTest that replays the
// committed corpus (test/iterators/image/ImageDecoderCorpusTest.cpp), so both exercise the same
// path.
//
// Each input is decoded from memory (ImageDecoder::decode; decodeFile only adds RegularFile's
// reading, which the IDX target covers) twice: to 1 channel with a small size hint (a JPEG's Y
// plane and DCT scaling) and to 4 channels at full size (alpha, CMYK, 16-bit samples). A PNG is
// decoded once more with every chunk's CRC-32 recomputed: mutations almost never keep a CRC valid,
// so the repaired copy is what carries mutated headers, palettes and image data past libpng's CRC
// checks to the code behind them.
//
// The contract under test: only dl4cpp::Error may escape, and an accepted image has the channels
// asked for, a size within ImageDecoder's limits, exactly channels x height x width samples, each
// finite and in [0, 255]. Anything else is rethrown as std::logic_error (under libFuzzer: an
// uncaught exception, a crash); memory errors are the sanitizers' to report.
#include <zlib.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "iterators/image/ImageDecoder.h"
#include "nn/core/Error.h"

namespace dl4cpp::fuzz {

inline bool isPng(std::span<const uint8_t> b) {
  return b.size() >= 8 && b[0] == 0x89 && b[1] == 'P' && b[2] == 'N' && b[3] == 'G';
}

// The PNG with every whole chunk's CRC-32 set to match its type and data.
inline std::vector<uint8_t> withRepairedPngCrcs(std::span<const uint8_t> bytes) {
  std::vector<uint8_t> out(bytes.begin(), bytes.end());
  size_t at = 8;
  while (at + 12 <= out.size()) {
    const uint32_t length = uint32_t{out[at]} << 24 | uint32_t{out[at + 1]} << 16 |
                            uint32_t{out[at + 2]} << 8 | out[at + 3];
    if (length > out.size() - at - 12) break;
    const uLong crc = crc32(0, out.data() + at + 4, static_cast<uInt>(length + 4));
    for (int i = 0; i < 4; ++i)
      out[at + 8 + length + static_cast<size_t>(i)] = static_cast<uint8_t>(crc >> (24 - 8 * i));
    at += 12 + length;
  }
  return out;
}

inline void checkAccepted(const Image& image, int channels) {
  if (image.channels != channels || image.height < 1 || image.width < 1 ||
      image.height > ImageDecoder::kMaxSide || image.width > ImageDecoder::kMaxSide ||
      int64_t{image.height} * image.width > ImageDecoder::kMaxPixels ||
      image.pixels.size() != static_cast<size_t>(channels) * static_cast<size_t>(image.height) *
                                 static_cast<size_t>(image.width))
    throw std::logic_error("ImageDecoder accepted an image of " + std::to_string(image.channels) +
                           " x " + std::to_string(image.height) + " x " +
                           std::to_string(image.width) + " with " +
                           std::to_string(image.pixels.size()) + " samples for " +
                           std::to_string(channels) + " channels");
  for (const float v : image.pixels)
    if (!(v >= 0 && v <= 255))  // NaN fails too
      throw std::logic_error("ImageDecoder gave a sample outside [0, 255]: " + std::to_string(v));
}

// Decodes `bytes` as described above; a dl4cpp::Error is an accepted outcome. Returns how many of
// the decodes succeeded (of 2, or 4 for a PNG).
inline int decodeImageInput(std::span<const uint8_t> bytes) {
  int accepted = 0;
  auto attempt = [&](std::span<const uint8_t> input) {
    for (const auto& [channels, hint] :
         {std::pair<int, DecodeSizeHint>{1, {4, 4}}, {4, DecodeSizeHint{}}}) {
      try {
        checkAccepted(ImageDecoder::decode(std::as_bytes(input), channels, "fuzz input", hint),
                      channels);
        ++accepted;
      } catch (const Error&) {
      }
    }
  };
  attempt(bytes);
  if (isPng(bytes)) attempt(withRepairedPngCrcs(bytes));
  return accepted;
}

}  // namespace dl4cpp::fuzz
