#include <doctest/doctest.h>

#include <vector>

#include "ImageTransformTestUtil.h"
#include "iterators/image/transform/BrightnessContrastTransform.h"
#include "nn/core/Error.h"

using namespace dl4cpp;
using testutil::bitIdentical;
using testutil::transformed;

namespace {

// One channel of four samples, mean 100.
Image fourSamples(std::vector<float> values) {
  Image image(1, 2, 2);
  image.pixels = std::move(values);
  return image;
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("BrightnessContrastTransform: (x - mean) * c + mean + b, by hand") {
    const Image image = fourSamples({60, 100, 140, 100});  // mean 100
    CHECK(transformed(BrightnessContrastTransform({10, 10}, {1, 1}), image, 0).pixels ==
          std::vector<float>{70, 110, 150, 110});
    CHECK(transformed(BrightnessContrastTransform({0, 0}, {2, 2}), image, 0).pixels ==
          std::vector<float>{20, 100, 180, 100});
    CHECK(transformed(BrightnessContrastTransform({-30, -30}, {0.5, 0.5}), image, 0).pixels ==
          std::vector<float>{50, 70, 90, 70});
  }

  TEST_CASE("BrightnessContrastTransform: results are clamped to [0, 255]") {
    const Image image = fourSamples({0, 100, 250, 50});  // mean 100
    CHECK(transformed(BrightnessContrastTransform({10, 10}, {1, 1}), image, 0).pixels ==
          std::vector<float>{10, 110, 255, 60});
    CHECK(transformed(BrightnessContrastTransform({0, 0}, {3, 3}), image, 0).pixels ==
          std::vector<float>{0, 100, 255, 0});
    CHECK(transformed(BrightnessContrastTransform({-300, -300}, {1, 1}), image, 0).pixels ==
          std::vector<float>{0, 0, 0, 0});
  }

  TEST_CASE("BrightnessContrastTransform: the mean is over all channels together") {
    Image image(2, 1, 2);
    image.pixels = {0, 0, 200, 200};  // channel means 0 and 200, image mean 100
    CHECK(transformed(BrightnessContrastTransform({0, 0}, {0, 0}), image, 0).pixels ==
          std::vector<float>{100, 100, 100, 100});
  }

  TEST_CASE("BrightnessContrastTransform: no offset and factor 1 is exactly the identity") {
    // Samples whose mean is no round number: (x - mean) + mean would not give x back.
    const Image image = fourSamples({0.1f, 3.7f, 254.9f, 17.3f});
    for (uint64_t e = 0; e < 5; ++e)
      CHECK(bitIdentical(transformed(BrightnessContrastTransform(0, 0), image, e), image));
  }

  TEST_CASE("BrightnessContrastTransform: draws spread over the ranges, two per image") {
    const BrightnessContrastTransform jitter(20, 0.5);
    const Image image =
        fourSamples({100, 100, 100, 100});  // contrast has no effect on a flat image
    double lowest = 255, highest = 0;
    for (uint64_t e = 0; e < 200; ++e) {
      const float v = transformed(jitter, image, e).pixels[0];
      lowest = std::min(lowest, static_cast<double>(v));
      highest = std::max(highest, static_cast<double>(v));
    }
    CHECK(lowest >= 80);
    CHECK(highest <= 120);
    CHECK(lowest < 82);
    CHECK(highest > 118);
    CHECK(testutil::drawsUsed(jitter, image, 0) == 2);
  }

  TEST_CASE("BrightnessContrastTransform: parameter errors name the parameter") {
    CHECK_THROWS_WITH_AS(BrightnessContrastTransform(-1, 0),
                         doctest::Contains("BrightnessContrastTransform: brightness = -1"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(BrightnessContrastTransform(0, 1),
                         doctest::Contains("contrast = 1 must be in [0, 1)"), ConfigError);
    CHECK_THROWS_WITH_AS(BrightnessContrastTransform({0, 0}, {-0.5, 1}),
                         doctest::Contains("contrast range [-0.5, 1] must be finite with min <= "
                                           "max and min >= 0"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(BrightnessContrastTransform({5, 1}, {1, 1}),
                         doctest::Contains("brightness range [5, 1]"), ConfigError);
  }
}
