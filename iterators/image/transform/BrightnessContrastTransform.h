#pragma once
// BrightnessContrastTransform: random brightness and contrast (DataVec has none; torchvision's
// ColorJitter and TensorFlow's random_brightness / random_contrast do). Every sample x becomes
//   (x - mean) * c + mean + b, clamped to [0, 255],
// with a contrast factor c and a brightness offset b (in sample units, the image's [0, 255]) drawn
// per example, and `mean` the mean of all the image's samples (every channel together): contrast
// then stretches about the image's own average, so it keeps the average brightness and keeps a
// grey pixel grey, and a dark image is not pushed towards mid-grey as a fixed 127.5 would. c = 1,
// b = 0 leaves every sample exactly as it was. Every transform() draws exactly two values (b,
// then c).
#include "iterators/image/ImageTransform.h"
#include "iterators/image/transform/UniformRange.h"

namespace dl4cpp {

class BrightnessContrastTransform : public ImageTransform {
 public:
  // b in [-brightness, brightness] (>= 0), c in [1 - contrast, 1 + contrast] (contrast in [0, 1)).
  BrightnessContrastTransform(double brightness, double contrast);
  // b and c from their own ranges; c >= 0.
  BrightnessContrastTransform(UniformRange brightness, UniformRange contrast);

  void transform(Image& image, ExampleRandom& random) const override;

 private:
  UniformRange brightness_, contrast_;
};

}  // namespace dl4cpp
