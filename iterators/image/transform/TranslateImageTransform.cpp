#include "iterators/image/transform/TranslateImageTransform.h"

#include "iterators/image/transform/AffineWarp.h"
#include "iterators/image/transform/ImageTransformChecks.h"

namespace dl4cpp {

namespace {

constexpr const char* kName = "TranslateImageTransform";

}  // namespace

TranslateImageTransform::TranslateImageTransform(double maxDx, double maxDy)
    : dx_(UniformRange::symmetric(kName, "maxDx", maxDx)),
      dy_(UniformRange::symmetric(kName, "maxDy", maxDy)) {}

TranslateImageTransform::TranslateImageTransform(UniformRange dx, UniformRange dy)
    : dx_(dx), dy_(dy) {
  dx_.validate(kName, "dx");
  dy_.validate(kName, "dy");
}

void TranslateImageTransform::transform(Image& image, ExampleRandom& random) const {
  requireImage(image, kName);
  const double dx = dx_.draw(random);
  const double dy = dy_.draw(random);
  image = warpAffine(image, AffineMap::translation(-dx, -dy), image.height, image.width,
                     WarpBorder::Zero);
}

}  // namespace dl4cpp
