#pragma once
// ImageWriter: an Image written as a PNG or JPEG file, to look at augmented images, to make test
// fixtures and image-folder data sets. Samples are rounded to the nearest integer and clamped to
// [0, 255] (NaN becomes 0); a 16-bit PNG stores them times 257 (65535 / 255), so that
// ImageDecoder reads back exactly what was written at either depth.
//   PNG   1 channel grey, 2 grey+alpha, 3 RGB, 4 RGBA; 8 or 16 bits a sample; lossless.
//   JPEG  1 channel grey or 3 RGB; quality 1 to 100; libjpeg's defaults (baseline, YCbCr with
//         the chroma halved both ways), lossy.
// encode* return the file's bytes; write* write them atomically (writeFileAtomically): a reader of
// the path sees the old file or the whole new one, never a part. The path follows the output-path
// rule (nn/core/OutputPath.h), checked before the image is encoded: OutputPathError for a target
// that is not a regular file (a directory, FIFO, device) or a folder that cannot be written.
// Errors: ConfigError for a bit depth, quality or channel count the format does not take;
// ShapeError for an image whose pixels do not match its size, or that is empty or larger than the
// format allows; AllocationError when memory runs out; IoError naming the path when the file
// cannot be written.
#include <cstddef>
#include <filesystem>
#include <vector>

#include "iterators/image/Image.h"

namespace dl4cpp {

class ImageWriter {
 public:
  static std::vector<std::byte> encodePng(const Image& image, int bitDepth = 8);
  static std::vector<std::byte> encodeJpeg(const Image& image, int quality = 95);
  static void writePng(const Image& image, const std::filesystem::path& path, int bitDepth = 8);
  static void writeJpeg(const Image& image, const std::filesystem::path& path, int quality = 95);
};

}  // namespace dl4cpp
