#include "iterators/image/ImageFormat.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace dl4cpp {

using namespace std::string_view_literals;  // "II*\0"sv keeps its NUL

namespace {

constexpr std::array<unsigned char, 8> kPngSignature = {0x89, 'P',  'N',  'G',
                                                        '\r', '\n', 0x1a, '\n'};
constexpr std::array<unsigned char, 3> kJpegSignature = {0xff, 0xd8, 0xff};

unsigned char at(std::span<const std::byte> bytes, size_t i) {
  return static_cast<unsigned char>(bytes[i]);
}

// True when the first `prefix` bytes equal the start of `signature` (all of it when prefix is
// its size).
template <size_t N>
bool matches(std::span<const std::byte> bytes, const std::array<unsigned char, N>& signature,
             size_t prefix) {
  if (bytes.size() < prefix) return false;
  for (size_t i = 0; i < prefix; ++i)
    if (at(bytes, i) != signature[i]) return false;
  return true;
}

bool startsWith(std::span<const std::byte> bytes, size_t offset, std::string_view text) {
  if (bytes.size() < offset + text.size()) return false;
  for (size_t i = 0; i < text.size(); ++i)
    if (at(bytes, offset + i) != static_cast<unsigned char>(text[i])) return false;
  return true;
}

// No control bytes but tab, line feed, form feed and carriage return in the first 512 bytes:
// ASCII or UTF-8 text (binary data almost always holds a control byte that early).
bool looksLikeText(std::span<const std::byte> bytes) {
  const size_t n = std::min<size_t>(bytes.size(), 512);
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = at(bytes, i);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\f' && c != '\r') || c == 0x7f) return false;
  }
  return true;
}

}  // namespace

std::optional<ImageFormat> sniffImageFormat(std::span<const std::byte> bytes) {
  if (matches(bytes, kPngSignature, kPngSignature.size())) return ImageFormat::Png;
  if (matches(bytes, kJpegSignature, kJpegSignature.size())) return ImageFormat::Jpeg;
  return std::nullopt;
}

bool isCutOffSignature(std::span<const std::byte> bytes) {
  return (bytes.size() < kPngSignature.size() && matches(bytes, kPngSignature, bytes.size())) ||
         (bytes.size() < kJpegSignature.size() && matches(bytes, kJpegSignature, bytes.size()));
}

std::string describeNonImageBytes(std::span<const std::byte> bytes) {
  if (startsWith(bytes, 0, "GIF87a"sv) || startsWith(bytes, 0, "GIF89a"sv)) return "a GIF image";
  // A BMP header holds NUL bytes (reserved fields), which tells it from text starting "BM".
  if (startsWith(bytes, 0, "BM"sv) && !looksLikeText(bytes)) return "a BMP image";
  if (startsWith(bytes, 0, "RIFF"sv) && startsWith(bytes, 8, "WEBP"sv)) return "a WebP image";
  if (startsWith(bytes, 0, "II*\0"sv) || startsWith(bytes, 0, "MM\0*"sv)) return "a TIFF image";
  if (startsWith(bytes, 0, "\0\0\1\0"sv)) return "a Windows ICO icon";
  if (startsWith(bytes, 4, "ftypheic"sv) || startsWith(bytes, 4, "ftypheix"sv) ||
      startsWith(bytes, 4, "ftypmif1"sv) || startsWith(bytes, 4, "ftypavif"sv))
    return "a HEIF or AVIF image";
  if (startsWith(bytes, 0, "\x1f\x8b"sv)) return "gzip data";
  if (startsWith(bytes, 0, "PK\x03\x04"sv)) return "a ZIP archive";
  if (startsWith(bytes, 0, "%PDF"sv)) return "a PDF document";
  if (looksLikeText(bytes)) return "text";
  std::string first;
  for (size_t i = 0; i < std::min<size_t>(bytes.size(), 8); ++i)
    first += fmt::format("{}{:02x}", i == 0 ? "" : " ", at(bytes, i));
  return fmt::format("unrecognised data (first bytes {})", first);
}

}  // namespace dl4cpp
