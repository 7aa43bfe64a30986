#include "iterators/image/transform/CropImageTransform.h"

#include <algorithm>

#include "iterators/image/transform/CropRegion.h"
#include "iterators/image/transform/ImageTransformChecks.h"

namespace dl4cpp {

namespace {

constexpr const char* kName = "CropImageTransform";

}  // namespace

CropImageTransform::CropImageTransform(int crop) : CropImageTransform(crop, crop, crop, crop) {}

CropImageTransform::CropImageTransform(int cropTop, int cropLeft, int cropBottom, int cropRight)
    : cropTop_(cropTop), cropLeft_(cropLeft), cropBottom_(cropBottom), cropRight_(cropRight) {
  requirePixelCount(kName, "cropTop", cropTop, 0);
  requirePixelCount(kName, "cropLeft", cropLeft, 0);
  requirePixelCount(kName, "cropBottom", cropBottom, 0);
  requirePixelCount(kName, "cropRight", cropRight, 0);
}

void CropImageTransform::transform(Image& image, ExampleRandom& random) const {
  requireImage(image, kName);
  const int top = random.below(cropTop_ + 1);
  const int left = random.below(cropLeft_ + 1);
  const int bottom = random.below(cropBottom_ + 1);
  const int right = random.below(cropRight_ + 1);
  const int y = std::min(top, image.height - 1);
  const int x = std::min(left, image.width - 1);
  image = cropRegion(image, y, x, std::max(1, image.height - bottom - y),
                     std::max(1, image.width - right - x));
}

}  // namespace dl4cpp
