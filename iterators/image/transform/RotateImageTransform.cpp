#include "iterators/image/transform/RotateImageTransform.h"

#include "iterators/image/transform/AffineWarp.h"
#include "iterators/image/transform/ImageTransformChecks.h"

namespace dl4cpp {

namespace {

constexpr const char* kName = "RotateImageTransform";

}  // namespace

RotateImageTransform::RotateImageTransform(double angle)
    : RotateImageTransform(0.0, 0.0, angle, 0.0) {}

RotateImageTransform::RotateImageTransform(double centerx, double centery, double angle,
                                           double scale)
    : RotateImageTransform(UniformRange::symmetric(kName, "centerx", centerx),
                           UniformRange::symmetric(kName, "centery", centery),
                           UniformRange::symmetric(kName, "angle", angle),
                           UniformRange::aroundOne(kName, "scale", scale)) {}

RotateImageTransform::RotateImageTransform(UniformRange angle, UniformRange scale)
    : RotateImageTransform(UniformRange{}, UniformRange{}, angle, scale) {}

RotateImageTransform::RotateImageTransform(UniformRange centerx, UniformRange centery,
                                           UniformRange angle, UniformRange scale)
    : centerx_(centerx), centery_(centery), angle_(angle), scale_(scale) {
  // The DataVec form's centre offsets come validated; a scale factor of 0 would collapse the image
  // to a point (and has no inverse).
  angle_.validate(kName, "angle");
  scale_.validate(kName, "scale", UniformRange::Bound::Positive);
}

void RotateImageTransform::transform(Image& image, ExampleRandom& random) const {
  requireImage(image, kName);
  const double cy = (image.height - 1) / 2.0 + centery_.draw(random);
  const double cx = (image.width - 1) / 2.0 + centerx_.draw(random);
  const double degrees = angle_.draw(random);
  const double scale = scale_.draw(random);
  const AffineMap sourceToDestination = AffineMap::rotation(cx, cy, degrees, scale);
  image =
      warpAffine(image, sourceToDestination.inverse(), image.height, image.width, WarpBorder::Zero);
}

}  // namespace dl4cpp
