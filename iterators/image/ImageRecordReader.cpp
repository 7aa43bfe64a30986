#include "iterators/image/ImageRecordReader.h"

#include <fmt/format.h>

#include <algorithm>

#include "iterators/image/ImageDecoder.h"
#include "iterators/image/ImageResize.h"
#include "nn/core/Error.h"

namespace dl4cpp {

ImageRecordReader::ImageRecordReader(int height, int width, int channels, LabeledFileSplit split,
                                     std::shared_ptr<const ImageTransform> transform)
    : shape_{channels, height, width}, split_(std::move(split)), transform_(std::move(transform)) {
  if (height < 1 || width < 1)
    throw ConfigError(fmt::format("ImageRecordReader: height and width must be >= 1, got {} x {}",
                                  height, width));
  if (channels != 1 && channels != 3 && channels != 4)
    throw ConfigError(
        fmt::format("ImageRecordReader: channels must be 1, 3 or 4, got {}", channels));
}

ImageRecordReader::ImageRecordReader(int height, int width, int channels,
                                     std::shared_ptr<const PathLabelGenerator> labelGenerator)
    : ImageRecordReader(height, width, channels,
                        LabeledFileSplit::fromFiles({}, ParentPathLabelGenerator())) {
  if (!labelGenerator)
    throw ConfigError(
        "ImageRecordReader: the label generator is null (use "
        "std::make_shared<ParentPathLabelGenerator>() for labels from folder names)");
  labelGenerator_ = std::move(labelGenerator);
  initialized_ = false;
}

void ImageRecordReader::initialize(const InputSplit& split) {
  if (split.locations().empty())
    throw DataNotFoundError(
        "ImageRecordReader::initialize: the split holds no file (an empty part of sample()?)");
  const ParentPathLabelGenerator parentFolder;
  split_ = LabeledFileSplit::fromFiles(split.locations(),
                                       labelGenerator_ ? *labelGenerator_ : parentFolder);
  initialized_ = true;
}

void ImageRecordReader::initialize(const InputSplit& split,
                                   std::shared_ptr<const ImageTransform> transform) {
  initialize(split);
  transform_ = std::move(transform);
}

int ImageRecordReader::load(int64_t index, ExampleRandom& random, float* pixels) const {
  const LabeledFile& file = split_.files().at(static_cast<size_t>(index));
  Image image = ImageDecoder::decodeFile(file.path, shape_.channels, {shape_.height, shape_.width});
  if (transform_) transform_->transform(image, random);
  if (image.height != shape_.height || image.width != shape_.width)
    image = resize(image, shape_.height, shape_.width);
  // A transform must not change the channels: the batch has room for exactly this many samples.
  if (image.channels != shape_.channels)
    throw DataMismatchError(fmt::format(
        "ImageRecordReader: '{}' has {} channel(s) after its transform, the reader makes {}",
        file.path.string(), image.channels, shape_.channels));
  std::copy(image.pixels.begin(), image.pixels.end(), pixels);
  return file.label;
}

}  // namespace dl4cpp
