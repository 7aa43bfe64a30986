#pragma once
// ImageTransform: one augmentation step, as DataVec's ImageTransform. transform() is const and
// draws every random choice from the example's ExampleRandom, so one transform object is shared
// by all decode threads and an example's result depends only on (seed, epoch, example).
// A transform may change the image's size (a crop); the reader resizes the pipeline's result to
// the size it was asked for.
#include "iterators/image/ExampleRandom.h"
#include "iterators/image/Image.h"

namespace dl4cpp {

class ImageTransform {
 public:
  virtual ~ImageTransform() = default;
  virtual void transform(Image& image, ExampleRandom& random) const = 0;

 protected:
  ImageTransform() = default;
  ImageTransform(const ImageTransform&) = default;
  ImageTransform& operator=(const ImageTransform&) = default;
};

}  // namespace dl4cpp
