#pragma once
// LabeledImageSource: what ImageDataSetIterator batches: a fixed number of labelled examples, each
// one image of the same channels x height x width, loaded (decoded, augmented, resized) on demand.
// ImageRecordReader is the one over image files.
//
// Contract: load() is const and safe to call from several threads at once (the iterator's decode
// threads); example `index`'s result depends only on the index and the draws of `random`, which
// the iterator derives from (seed, epoch, position in the epoch).
#include <cstdint>
#include <string>
#include <vector>

#include "iterators/image/ExampleRandom.h"

namespace dl4cpp {

struct ImageShape {
  int channels = 0;
  int height = 0;
  int width = 0;
  int64_t size() const { return int64_t{channels} * height * width; }
};

class LabeledImageSource {
 public:
  virtual ~LabeledImageSource() = default;

  virtual int64_t size() const = 0;
  virtual ImageShape imageShape() const = 0;
  virtual const std::vector<std::string>& labels() const = 0;
  int numLabels() const { return static_cast<int>(labels().size()); }

  // Writes example `index` as imageShape().size() floats, CHW, into `pixels` and returns its label
  // index. Throws the source's errors (naming the file) for an example that cannot be loaded.
  virtual int load(int64_t index, ExampleRandom& random, float* pixels) const = 0;

 protected:
  LabeledImageSource() = default;
  LabeledImageSource(const LabeledImageSource&) = default;
  LabeledImageSource& operator=(const LabeledImageSource&) = default;
};

}  // namespace dl4cpp
