#pragma once
// What a file's first bytes say it is. ImageDecoder recognises PNG and JPEG by their magic bytes,
// never by the file's name; other common formats are recognised only so that an error can say what
// was found instead ("a GIF image", "text").
#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace dl4cpp {

enum class ImageFormat { Png, Jpeg };

// The format whose signature the bytes start with (PNG: 89 50 4E 47 0D 0A 1A 0A, JPEG: FF D8 FF).
std::optional<ImageFormat> sniffImageFormat(std::span<const std::byte> bytes);

// True when the bytes are a proper prefix of the PNG or JPEG signature: a file cut off
// before its signature is complete.
bool isCutOffSignature(std::span<const std::byte> bytes);

// What bytes that are neither PNG nor JPEG look like, for an error message: "a GIF image",
// "a BMP image", "a WebP image", "a TIFF image", "a Windows ICO icon", "a HEIF or AVIF image",
// "gzip data", "a ZIP archive", "a PDF document", "text", or "unrecognised data (first bytes 00 11
// 22 33)".
std::string describeNonImageBytes(std::span<const std::byte> bytes);

}  // namespace dl4cpp
