#include "iterators/image/transform/ScaleImageTransform.h"

#include <algorithm>
#include <cmath>

#include "iterators/image/transform/AffineWarp.h"
#include "iterators/image/transform/ImageTransformChecks.h"

namespace dl4cpp {

namespace {

constexpr const char* kName = "ScaleImageTransform";

// The new side: side + delta * u with u uniform in [-1, 1), rounded, at least 1.
int resizedSide(int side, double delta, ExampleRandom& random) {
  return std::max(1, static_cast<int>(std::lround(side + delta * random.uniform(-1.0, 1.0))));
}

}  // namespace

ScaleImageTransform::ScaleImageTransform(double delta) : ScaleImageTransform(delta, delta) {}

ScaleImageTransform::ScaleImageTransform(double dx, double dy) : dx_(dx), dy_(dy) {
  requirePixelCount(kName, "dx", dx, 0);
  requirePixelCount(kName, "dy", dy, 0);
}

void ScaleImageTransform::transform(Image& image, ExampleRandom& random) const {
  requireImage(image, kName);
  const int height = resizedSide(image.height, dy_, random);
  const int width = resizedSide(image.width, dx_, random);
  // OpenCV's resize: destination pixel centre (x + 0.5) / width of the way across the source.
  const double sx = static_cast<double>(image.width) / width;
  const double sy = static_cast<double>(image.height) / height;
  const AffineMap destinationToSource{sx, 0, 0.5 * sx - 0.5, 0, sy, 0.5 * sy - 0.5};
  image = warpAffine(image, destinationToSource, height, width, WarpBorder::Replicate);
}

}  // namespace dl4cpp
