#include "iterators/image/transform/BrightnessContrastTransform.h"

#include <cstddef>
#include <numeric>
#include <vector>

#include "iterators/image/transform/ImageTransformChecks.h"

namespace dl4cpp {

namespace {

constexpr const char* kName = "BrightnessContrastTransform";

// The mean of all samples, summed in eight independent lanes: one running sum would wait on each
// addition's latency (a third of this transform's time on a 224 x 224 x 3 image).
double meanOf(const std::vector<float>& samples) {
  constexpr size_t kLanes = 8;
  double lanes[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= samples.size(); i += kLanes)
    for (size_t k = 0; k < kLanes; ++k) lanes[k] += samples[i + k];
  double sum =
      std::accumulate(samples.begin() + static_cast<std::ptrdiff_t>(i), samples.end(), 0.0);
  for (double lane : lanes) sum += lane;
  return sum / static_cast<double>(samples.size());
}

}  // namespace

BrightnessContrastTransform::BrightnessContrastTransform(double brightness, double contrast)
    : BrightnessContrastTransform(UniformRange::symmetric(kName, "brightness", brightness),
                                  UniformRange::aroundOne(kName, "contrast", contrast)) {}

BrightnessContrastTransform::BrightnessContrastTransform(UniformRange brightness,
                                                         UniformRange contrast)
    : brightness_(brightness), contrast_(contrast) {
  brightness_.validate(kName, "brightness");
  contrast_.validate(kName, "contrast", UniformRange::Bound::NonNegative);
}

void BrightnessContrastTransform::transform(Image& image, ExampleRandom& random) const {
  requireImage(image, kName);
  const double b = brightness_.draw(random);
  const double c = contrast_.draw(random);
  const double mean = meanOf(image.pixels);
  // x * c + offset: one multiply-add per sample, and with c = 1 and b = 0 an offset of exactly 0,
  // so x comes back exactly. In float, and clamped with plain comparisons, so that it vectorises.
  const float scale = static_cast<float>(c);
  const float offset = static_cast<float>(mean * (1 - c) + b);
  for (float& x : image.pixels) {
    const float v = x * scale + offset;
    x = v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v);
  }
}

}  // namespace dl4cpp
