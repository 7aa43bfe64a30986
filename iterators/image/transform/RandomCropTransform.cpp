#include "iterators/image/transform/RandomCropTransform.h"

#include <fmt/format.h>

#include "iterators/image/transform/CropRegion.h"
#include "iterators/image/transform/ImageTransformChecks.h"
#include "nn/core/Error.h"

namespace dl4cpp {

namespace {

constexpr const char* kName = "RandomCropTransform";

}  // namespace

RandomCropTransform::RandomCropTransform(int height, int width) : height_(height), width_(width) {
  requirePixelCount(kName, "height", height, 1);
  requirePixelCount(kName, "width", width, 1);
}

void RandomCropTransform::transform(Image& image, ExampleRandom& random) const {
  requireImage(image, kName);
  if (image.height < height_ || image.width < width_)
    throw DataMismatchError(
        fmt::format("{}: cannot crop {} x {} (height x width) from a {} x {} image", kName, height_,
                    width_, image.height, image.width));
  const int top = random.below(image.height - height_ + 1);
  const int left = random.below(image.width - width_ + 1);
  image = cropRegion(image, top, left, height_, width_);
}

}  // namespace dl4cpp
