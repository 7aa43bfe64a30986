#pragma once
// RotateImageTransform: DataVec's RotateImageTransform, which is also MATLAB's RandRotation and
// RandScale (zoom about the centre keeping the size): a rotation by a random angle and a scaling
// by a random factor about the image's centre moved by a random offset, the output the input's
// size, sampled bilinearly with 0 outside the source (OpenCV's warpAffine defaults, which DataVec
// uses). Positive angles turn counter-clockwise as the image is shown.
//
// The centre is ((width - 1) / 2, (height - 1) / 2), the true centre in pixel-centre coordinates,
// where DataVec takes (width / 2, height / 2) in integers: for even sizes DataVec's turns are half
// a pixel off-centre, this one's are not (a quarter turn of a square maps it onto itself).
//
// Every transform() draws exactly four values (centre y, centre x, angle, scale), also for fixed
// ranges.
#include "iterators/image/ImageTransform.h"
#include "iterators/image/transform/UniformRange.h"

namespace dl4cpp {

class RotateImageTransform : public ImageTransform {
 public:
  // A random angle in [-angle, angle] degrees (DataVec's RotateImageTransform(angle)).
  explicit RotateImageTransform(double angle);
  // DataVec's full form: the centre moved by up to centerx, centery pixels, an angle in
  // [-angle, angle] degrees and a scale factor in [1 - scale, 1 + scale]; all >= 0, scale < 1.
  RotateImageTransform(double centerx, double centery, double angle, double scale);
  // MATLAB's form: RandRotation (degrees) and RandScale (factors > 0), about the centre;
  // RotateImageTransform({90, 90}) is a fixed quarter turn.
  explicit RotateImageTransform(UniformRange angle, UniformRange scale = {1.0, 1.0});

  void transform(Image& image, ExampleRandom& random) const override;

 private:
  RotateImageTransform(UniformRange centerx, UniformRange centery, UniformRange angle,
                       UniformRange scale);

  UniformRange centerx_, centery_, angle_, scale_;
};

}  // namespace dl4cpp
