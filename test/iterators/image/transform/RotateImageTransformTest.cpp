#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "ImageTransformTestUtil.h"
#include "iterators/image/transform/RotateImageTransform.h"
#include "nn/core/Error.h"

using namespace dl4cpp;
using testutil::bitIdentical;
using testutil::numberedImage;
using testutil::transformed;

namespace {

// A counter-clockwise quarter turn of a square image: the transpose, flipped top to bottom.
Image quarterTurnByHand(const Image& in) {
  Image out(in.channels, in.width, in.height);
  for (int c = 0; c < in.channels; ++c)
    for (int y = 0; y < out.height; ++y)
      for (int x = 0; x < out.width; ++x) out.at(c, y, x) = in.at(c, x, in.width - 1 - y);
  return out;
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("RotateImageTransform: a quarter turn of a square image is its transpose, flipped") {
    // Odd and even sizes: the centre is the true centre, so a quarter turn maps the square onto
    // itself with no border, and every sample lands on a pixel centre.
    for (int n : {5, 4}) {
      const Image image = numberedImage(2, n, n);
      const Image once = transformed(RotateImageTransform({90, 90}), image, 0);
      CHECK(bitIdentical(once, quarterTurnByHand(image)));
      CHECK(bitIdentical(transformed(RotateImageTransform({-90, -90}), image, 3),
                         quarterTurnByHand(quarterTurnByHand(once))));
    }
  }

  TEST_CASE("RotateImageTransform: no angle, offset or scale is exactly the identity") {
    const Image image = numberedImage(3, 4, 7);
    for (uint64_t e = 0; e < 5; ++e) {
      CHECK(bitIdentical(transformed(RotateImageTransform(0), image, e), image));
      CHECK(bitIdentical(transformed(RotateImageTransform(0, 0, 0, 0), image, e), image));
      CHECK(bitIdentical(transformed(RotateImageTransform({0, 0}, {1, 1}), image, e), image));
    }
  }

  TEST_CASE("RotateImageTransform: keeps the size, fills 0 where the turned image does not reach") {
    Image white(1, 5, 9);
    white.pixels.assign(white.pixels.size(), 255.0f);
    const Image out = transformed(RotateImageTransform({45, 45}), white, 0);
    CHECK(out.height == 5);
    CHECK(out.width == 9);
    CHECK(out.at(0, 0, 0) == 0.0f);  // corners come from outside the source
    CHECK(out.at(0, 4, 8) == 0.0f);
    CHECK(out.at(0, 2, 4) == 255.0f);  // the centre stays
    for (float v : out.pixels) {
      CHECK(v >= 0.0f);
      CHECK(v <= 255.0f);
    }
  }

  TEST_CASE("RotateImageTransform: a scale factor zooms about the centre (MATLAB's RandScale)") {
    Image row(1, 1, 5);
    row.pixels = {0, 40, 80, 120, 160};
    // Factor 2 about x = 2: destination x reads source 2 + (x - 2) / 2.
    const Image zoomed = transformed(RotateImageTransform({0, 0}, {2, 2}), row, 0);
    CHECK(zoomed.pixels == std::vector<float>{40, 60, 80, 100, 120});
  }

  TEST_CASE("RotateImageTransform: angles spread over [-angle, angle], four draws each time") {
    // A single bright pixel right of the centre of a large image: its turned position gives the
    // angle (counter-clockwise: above the centre for positive angles).
    const RotateImageTransform rotate(30);
    Image dot(1, 41, 41);
    dot.at(0, 20, 40) = 255.0f;
    int above = 0, below = 0;
    for (uint64_t e = 0; e < 40; ++e) {
      const testutil::Centroid c = testutil::centroid(transformed(rotate, dot, e));
      const double degrees = std::atan2(20 - c.y, c.x - 20) * 180 / std::numbers::pi;
      CHECK(std::abs(degrees) <= 30.5);
      (degrees > 0 ? above : below) += 1;
    }
    CHECK(above > 5);
    CHECK(below > 5);
    CHECK(testutil::drawsUsed(rotate, dot, 0) == 4);
    CHECK(testutil::drawsUsed(RotateImageTransform({10, 10}), dot, 0) == 4);
  }

  TEST_CASE("RotateImageTransform: parameter errors name the parameter") {
    CHECK_THROWS_WITH_AS(RotateImageTransform(-1), doctest::Contains("angle = -1 must be"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(RotateImageTransform(std::numeric_limits<double>::quiet_NaN()),
                         doctest::Contains("RotateImageTransform: angle"), ConfigError);
    CHECK_THROWS_WITH_AS(RotateImageTransform(-2, 0, 10, 0), doctest::Contains("centerx = -2"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(RotateImageTransform(0, -2, 10, 0), doctest::Contains("centery = -2"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(RotateImageTransform(0, 0, 10, 1), doctest::Contains("scale = 1 must be"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(RotateImageTransform({10, -10}),
                         doctest::Contains("angle range [10, -10]"), ConfigError);
    CHECK_THROWS_WITH_AS(
        RotateImageTransform({0, 0}, {0, 2}),
        doctest::Contains("scale range [0, 2] must be finite with min <= max and min > 0"),
        ConfigError);
  }
}
