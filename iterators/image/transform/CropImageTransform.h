#pragma once
// CropImageTransform: DataVec's CropImageTransform: each side of the image cut by a random margin
// of 0 to cropTop, cropLeft, cropBottom, cropRight pixels (each uniform, drawn in that order:
// exactly four draws per transform()). Margins larger than the image are clamped as DataVec does:
// the top-left corner stays inside the image and at least one row and one column remain, so any
// image has a result; the margins are maxima, not a size the result must have (for that, see
// RandomCropTransform).
#include "iterators/image/ImageTransform.h"

namespace dl4cpp {

class CropImageTransform : public ImageTransform {
 public:
  // Every margin up to `crop` pixels.
  explicit CropImageTransform(int crop);
  // Margins in [0, kMaxTransformPixels] (ImageTransformChecks.h).
  CropImageTransform(int cropTop, int cropLeft, int cropBottom, int cropRight);

  void transform(Image& image, ExampleRandom& random) const override;

 private:
  int cropTop_, cropLeft_, cropBottom_, cropRight_;
};

}  // namespace dl4cpp
