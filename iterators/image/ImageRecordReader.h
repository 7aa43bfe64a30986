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
// DataVec's own shape works too: a reader made with a label generator, then initialised with
// any InputSplit (a FileSplit, a part of sample()) and a transform, batched by
// RecordReaderDataSetIterator (which runs an ImageDataSetIterator inside):
//
//   auto labelMaker = std::make_shared<ParentPathLabelGenerator>();
//   ImageRecordReader rr(28, 28, 1, labelMaker);
//   rr.initialize(parts[0], std::make_shared<FlipImageTransform>(seed));
//   RecordReaderDataSetIterator it(rr, 64, 1, rr.numLabels());
//
// initialize(split, transform) reads the split's files in the split's order and labels them as
// DataVec does: labels() (getLabels()) are the distinct names the generator gives the split's
// files, sorted, and label k is the k-th. So a split that lacks a class has fewer labels: read a
// test part against the training labels by checking getLabels() agree, or use LabeledFileSplit's
// knownLabels constructor. Initialise the reader before building an iterator over it, and not
// again while one reads it.
//
// Errors: ConfigError for a size or channel count the decoder does not make (channels 1, 3 or 4,
// sizes >= 1) or a null label generator; initialize() throws DataNotFoundError for an empty split
// and the generator's errors; load() throws the decoder's errors, which name the file (corrupt,
// truncated, not an image). load() is const and thread-safe: the reader holds nothing that
// loading changes.
#include <memory>

#include "iterators/InputSplit.h"
#include "iterators/image/ImageTransform.h"
#include "iterators/image/LabeledFileSplit.h"
#include "iterators/image/LabeledImageSource.h"

namespace dl4cpp {

class ImageRecordReader : public LabeledImageSource {
 public:
  ImageRecordReader(int height, int width, int channels, LabeledFileSplit split,
                    std::shared_ptr<const ImageTransform> transform = nullptr);
  // DataVec's ImageRecordReader(height, width, channels, labelGenerator); initialize() before use.
  ImageRecordReader(int height, int width, int channels,
                    std::shared_ptr<const PathLabelGenerator> labelGenerator);

  // DataVec's initialize(split[, transform]): the split's files, labelled by the reader's
  // generator (ParentPathLabelGenerator for a reader made from a LabeledFileSplit); without a
  // transform the reader keeps the one it has.
  void initialize(const InputSplit& split);
  void initialize(const InputSplit& split, std::shared_ptr<const ImageTransform> transform);
  // False for a reader made with a label generator until initialize().
  bool initialized() const { return initialized_; }
  // DataVec's getLabels(): labels().
  const std::vector<std::string>& getLabels() const { return split_.labels(); }

  int64_t size() const override { return split_.size(); }
  ImageShape imageShape() const override { return shape_; }
  const std::vector<std::string>& labels() const override { return split_.labels(); }
  int load(int64_t index, ExampleRandom& random, float* pixels) const override;

  const LabeledFileSplit& split() const { return split_; }

 private:
  ImageShape shape_;
  LabeledFileSplit split_;
  std::shared_ptr<const ImageTransform> transform_;
  std::shared_ptr<const PathLabelGenerator> labelGenerator_;  // null: the parent folder's name
  bool initialized_ = true;
};

}  // namespace dl4cpp
