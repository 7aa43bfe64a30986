#pragma once
// RandomCropTransform: DataVec's RandomCropTransform: a height x width window at a uniformly
// random position (top, then left: exactly two draws per transform()). An image smaller than the
// window is a DataMismatchError naming both sizes (DataVec throws too): a fixed-size crop cannot
// be made from it, and padding or a smaller result would hide that the data is not what the
// pipeline was built for. Put a resize before it, or use CropImageTransform, for mixed sizes.
#include "iterators/image/ImageTransform.h"

namespace dl4cpp {

class RandomCropTransform : public ImageTransform {
 public:
  // height, width in [1, kMaxTransformPixels] (ImageTransformChecks.h).
  RandomCropTransform(int height, int width);

  void transform(Image& image, ExampleRandom& random) const override;

 private:
  int height_, width_;
};

}  // namespace dl4cpp
