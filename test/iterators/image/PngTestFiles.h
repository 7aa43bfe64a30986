#pragma once
// PNG files built chunk by chunk, for what ImageWriter does not write (palettes, grey below 8 bits,
// tRNS, Adam7 interlacing, ancillary chunks that make libpng warn) and for damaged files (a header
// with absurd dimensions and a valid CRC, a short image stream).
#include <zlib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace testutil {

using Bytes = std::vector<uint8_t>;

inline std::span<const std::byte> asBytes(const Bytes& bytes) {
  return std::as_bytes(std::span<const uint8_t>(bytes));
}

inline void putU32(uint8_t* at, uint32_t v) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<uint8_t>(v >> (24 - 8 * i));
}

inline void appendU32(Bytes& out, uint32_t v) {
  out.resize(out.size() + 4);
  putU32(out.data() + out.size() - 4, v);
}

inline void append(Bytes& out, const Bytes& more) {
  out.insert(out.end(), more.begin(), more.end());
}

// Length, type, data and the CRC-32 of type and data.
inline Bytes pngChunk(std::string_view type, const Bytes& data) {
  Bytes chunk(12 + data.size());
  putU32(chunk.data(), static_cast<uint32_t>(data.size()));
  std::copy(type.begin(), type.end(), chunk.begin() + 4);
  std::copy(data.begin(), data.end(), chunk.begin() + 8);
  const uLong crc = crc32(0, chunk.data() + 4, static_cast<uInt>(4 + data.size()));
  putU32(chunk.data() + 8 + data.size(), static_cast<uint32_t>(crc));
  return chunk;
}

struct PngHeader {
  uint32_t width = 0;
  uint32_t height = 0;
  uint8_t bitDepth = 8;
  uint8_t colourType = 0;  // 0 grey, 2 RGB, 3 palette, 4 grey+alpha, 6 RGBA
  uint8_t interlace = 0;   // 1: Adam7
};

inline Bytes ihdr(const PngHeader& h) {
  Bytes data;
  appendU32(data, h.width);
  appendU32(data, h.height);
  data.insert(data.end(), {h.bitDepth, h.colourType, 0, 0, h.interlace});
  return pngChunk("IHDR", data);
}

// zlib data of the scanlines, each given packed at its bit depth and prefixed here with filter 0.
inline Bytes compressedScanlines(const std::vector<Bytes>& scanlines) {
  Bytes raw;
  for (const Bytes& line : scanlines) {
    raw.push_back(0);
    append(raw, line);
  }
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  Bytes out(size);
  if (compress(out.data(), &size, raw.data(), static_cast<uLong>(raw.size())) != Z_OK)
    throw std::runtime_error("zlib compress failed");
  out.resize(size);
  return out;
}

// A whole file: signature, IHDR, `chunks` (PLTE, tRNS, ancillary ones), one IDAT, IEND.
inline Bytes pngFile(const PngHeader& header, const std::vector<Bytes>& scanlines,
                     const std::vector<Bytes>& chunks = {}) {
  Bytes file = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  append(file, ihdr(header));
  for (const Bytes& chunk : chunks) append(file, chunk);
  append(file, pngChunk("IDAT", compressedScanlines(scanlines)));
  append(file, pngChunk("IEND", {}));
  return file;
}

// Samples below 8 bits packed most significant first, as PNG stores them.
inline Bytes packBits(const Bytes& values, int bitDepth) {
  Bytes packed((values.size() * static_cast<size_t>(bitDepth) + 7) / 8, 0);
  for (size_t i = 0; i < values.size(); ++i) {
    const size_t bit = i * static_cast<size_t>(bitDepth);
    packed[bit / 8] |= static_cast<uint8_t>(values[i] << (8 - bitDepth - bit % 8));
  }
  return packed;
}

// The scanlines of an Adam7-interlaced image of whole-byte pixels, from its rows.
inline std::vector<Bytes> adam7Scanlines(const std::vector<Bytes>& rows, int width,
                                         int bytesPerPixel) {
  struct Pass {
    int x0, y0, dx, dy;
  };
  const Pass passes[] = {{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4},
                         {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}};
  std::vector<Bytes> scanlines;
  for (const Pass& p : passes) {
    if (p.x0 >= width) continue;  // an empty pass has no scanlines
    for (int y = p.y0; y < static_cast<int>(rows.size()); y += p.dy) {
      Bytes line;
      for (int x = p.x0; x < width; x += p.dx)
        for (int b = 0; b < bytesPerPixel; ++b)
          line.push_back(rows[static_cast<size_t>(y)][static_cast<size_t>(x * bytesPerPixel + b)]);
      scanlines.push_back(line);
    }
  }
  return scanlines;
}

}  // namespace testutil
