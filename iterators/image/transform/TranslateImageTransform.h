#pragma once
// TranslateImageTransform: MATLAB's RandXTranslation / RandYTranslation (DataVec has no plain
// translation; its WarpImageTransform is a perspective warp): the image shifted by a random
// (dx, dy) pixels, positive to the right and down, the output the input's size, the uncovered
// border 0 and fractional shifts sampled bilinearly (the warp RotateImageTransform uses). An
// integer shift moves samples exactly. Every transform() draws exactly two values (dx, then dy).
#include "iterators/image/ImageTransform.h"
#include "iterators/image/transform/UniformRange.h"

namespace dl4cpp {

class TranslateImageTransform : public ImageTransform {
 public:
  // dx in [-maxDx, maxDx], dy in [-maxDy, maxDy] pixels; both >= 0.
  TranslateImageTransform(double maxDx, double maxDy);
  // MATLAB's form: dx and dy from their own ranges; TranslateImageTransform({2, 2}, {-1, -1}) is
  // a fixed shift by 2 right and 1 up.
  TranslateImageTransform(UniformRange dx, UniformRange dy);

  void transform(Image& image, ExampleRandom& random) const override;

 private:
  UniformRange dx_, dy_;
};

}  // namespace dl4cpp
