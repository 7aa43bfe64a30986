#pragma once
// NativeImageLoader: DataVec's NativeImageLoader, for what a DataVec port asks of it: the list of
// file extensions its images have (ALLOWED_FORMATS, for FileSplit and BalancedPathFilter), and
// asMatrix(file), one image as a network input.
//
//   FileSplit trainSplit(trainDir, NativeImageLoader::ALLOWED_FORMATS, seed);
//   NativeImageLoader loader(28, 28, 1);
//   Tensor image = loader.asMatrix("digit.png");   // (1, 1, 28, 28), pixels in [0, 255]
//
// ALLOWED_FORMATS holds the extensions of the formats ImageDecoder reads, PNG and JPEG
// (LabeledFileSplit::defaultImageExtensions()); DataVec's list also names BMP, GIF, TIFF, ...,
// which OpenCV reads and dl4cpp does not. Extensions match case-insensitively. A file is decoded
// by what its bytes are, whatever its name says.
//
// asMatrix decodes to `channels` and resizes to height x width as ImageRecordReader does (a JPEG
// at the smallest DCT scale still at least that size; ImageResize), without augmentation; scale
// the pixels as the model's training data was (ImagePreProcessingScaler). Errors are
// ImageDecoder's, naming the file; ConfigError for a size below 1 or channels other than 1, 3, 4.
#include <filesystem>
#include <string>
#include <vector>

#include "nn/tensor/Tensor.h"

namespace dl4cpp {

class NativeImageLoader {
 public:
  // A vector of strings, the type the extension parameters take (a user's own list is one too).
  // Built before main: should three short strings fail to allocate there, no program could run.
  // NOLINTNEXTLINE(cert-err58-cpp)
  static inline const std::vector<std::string> ALLOWED_FORMATS{"png", "jpg", "jpeg"};

  NativeImageLoader(int height, int width, int channels);

  // The image as a (1, channels, height, width) tensor, pixels in [0, 255].
  Tensor asMatrix(const std::filesystem::path& file) const;

 private:
  int height_, width_, channels_;
};

}  // namespace dl4cpp
