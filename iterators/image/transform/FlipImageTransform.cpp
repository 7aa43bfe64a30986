#include "iterators/image/transform/FlipImageTransform.h"

#include <algorithm>

#include "iterators/image/transform/ImageTransformChecks.h"

namespace dl4cpp {

namespace {

void flipRows(Image& image) {  // top <-> bottom
  for (int c = 0; c < image.channels; ++c)
    for (int y = 0; y < image.height / 2; ++y)
      std::swap_ranges(&image.at(c, y, 0), &image.at(c, y, 0) + image.width,
                       &image.at(c, image.height - 1 - y, 0));
}

void flipColumns(Image& image) {  // left <-> right
  for (int c = 0; c < image.channels; ++c)
    for (int y = 0; y < image.height; ++y)
      std::reverse(&image.at(c, y, 0), &image.at(c, y, 0) + image.width);
}

}  // namespace

void FlipImageTransform::transform(Image& image, ExampleRandom& random) const {
  requireImage(image, "FlipImageTransform");
  // DataVec's random mode: nextInt(4) - 2, where -2 is "no flip".
  static constexpr std::optional<FlipMode> kRandomModes[4] = {
      std::nullopt, FlipMode::Both, FlipMode::Vertical, FlipMode::Horizontal};
  std::optional<FlipMode> mode = mode_;
  if (!mode_ && seed_) {
    ExampleRandom keyed(*seed_, random.nextBits(), 0);
    mode = kRandomModes[keyed.below(4)];
  } else if (!mode_) {
    mode = kRandomModes[random.below(4)];
  }
  if (!mode) return;
  if (*mode != FlipMode::Vertical) flipColumns(image);
  if (*mode != FlipMode::Horizontal) flipRows(image);
}

}  // namespace dl4cpp
