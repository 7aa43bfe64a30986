#pragma once
// ImageRecordReader: the labelled images of a LabeledFileSplit, as DataVec's
// ImageRecordReader(height, width, channels, labelGenerator) initialised with a split and an
// ImageTransform; batch it with ImageDataSetIterator:
//
//   LabeledFileSplit all("fashion-png/train");
//   auto augment = std::make_shared<PipelineImageTransform>(...);
//   ImageRecordReader reader(28, 28, 1, all, augment);
//   ImageDataSetIterator train(reader, 64, {.decodeThreads = 2, .seed = 42});
//
// An example is loaded when a batch asks for it: the file is read and decoded to `channels`
// (ImageDecoder: PNG or JPEG, any bit depth; a JPEG is decoded at the smallest DCT scale that is
// still at least height x width), augmented by the transform (if any) with the example's draws,
// and resized to height x width (ImageResize). Pixels stay in [0, 255]; scale them with a
// pre-processor on the iterator (ImagePreProcessingScaler, NormalizerStandardize).
//
// Errors: ConfigError for a size or channel count the decoder does not make (channels 1, 3 or 4,
// sizes >= 1); load() throws the decoder's errors, which name the file (corrupt, truncated, not an
// image). load() is const and thread-safe: the reader holds nothing that loading changes.
#include <dl4cpp/iterators/image/ImageTransform.h>
#include <dl4cpp/iterators/image/LabeledFileSplit.h>
#include <dl4cpp/iterators/image/LabeledImageSource.h>

#include <memory>

namespace dl4cpp {

class ImageRecordReader : public LabeledImageSource {
 public:
  ImageRecordReader(int height, int width, int channels, LabeledFileSplit split,
                    std::shared_ptr<const ImageTransform> transform = nullptr);

  int64_t size() const override { return split_.size(); }
  ImageShape imageShape() const override { return shape_; }
  const std::vector<std::string>& labels() const override { return split_.labels(); }
  int load(int64_t index, ExampleRandom& random, float* pixels) const override;

  const LabeledFileSplit& split() const { return split_; }

 private:
  ImageShape shape_;
  LabeledFileSplit split_;
  std::shared_ptr<const ImageTransform> transform_;
};

}  // namespace dl4cpp
