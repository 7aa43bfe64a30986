#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ImageTransformTestUtil.h"
#include "iterators/image/transform/TranslateImageTransform.h"
#include "nn/core/Error.h"

using namespace dl4cpp;
using testutil::bitIdentical;
using testutil::numberedImage;
using testutil::transformed;

TEST_SUITE("iterators") {
  TEST_CASE("TranslateImageTransform: an integer shift moves samples exactly and fills 0") {
    const Image image = numberedImage(2, 4, 5);
    // 2 right, 1 up: destination (x, y) holds source (x - 2, y + 1).
    const Image out = transformed(TranslateImageTransform({2, 2}, {-1, -1}), image, 0);
    for (int c = 0; c < 2; ++c)
      for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 5; ++x) {
          const bool inside = x - 2 >= 0 && y + 1 < 4;
          CHECK(out.at(c, y, x) == (inside ? image.at(c, y + 1, x - 2) : 0.0f));
        }
  }

  TEST_CASE("TranslateImageTransform: a half-pixel shift averages neighbours") {
    Image row(1, 1, 3);
    row.pixels = {10, 30, 50};
    const Image out = transformed(TranslateImageTransform({0.5, 0.5}, {0, 0}), row, 0);
    CHECK(out.pixels == std::vector<float>{5, 20, 40});
  }

  TEST_CASE("TranslateImageTransform: no shift is exactly the identity") {
    const Image image = numberedImage(3, 4, 6);
    for (uint64_t e = 0; e < 5; ++e)
      CHECK(bitIdentical(transformed(TranslateImageTransform(0, 0), image, e), image));
  }

  TEST_CASE("TranslateImageTransform: shifts spread over [-maxDx, maxDx] x [-maxDy, maxDy]") {
    // A one-pixel dot at the centre of a 21 x 21 image: its centroid after the shift is the shift.
    Image dot(1, 21, 21);
    dot.at(0, 10, 10) = 200.0f;
    const TranslateImageTransform translate(3, 1);
    double minDx = 0, maxDx = 0, minDy = 0, maxDy = 0;
    for (uint64_t e = 0; e < 200; ++e) {
      const testutil::Centroid c = testutil::centroid(transformed(translate, dot, e));
      CHECK(c.mass == doctest::Approx(200));
      const double dx = c.x - 10, dy = c.y - 10;
      minDx = std::min(minDx, dx), maxDx = std::max(maxDx, dx);
      minDy = std::min(minDy, dy), maxDy = std::max(maxDy, dy);
    }
    CHECK(minDx >= -3);
    CHECK(maxDx <= 3);
    CHECK(minDy >= -1);
    CHECK(maxDy <= 1);
    CHECK(minDx < -2.5);  // the whole range is used
    CHECK(maxDx > 2.5);
    CHECK(minDy < -0.8);
    CHECK(maxDy > 0.8);
    CHECK(testutil::drawsUsed(translate, dot, 0) == 2);
  }

  TEST_CASE("TranslateImageTransform: parameter errors name the parameter") {
    CHECK_THROWS_WITH_AS(TranslateImageTransform(-1, 0), doctest::Contains("maxDx = -1"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(TranslateImageTransform(0, std::numeric_limits<double>::infinity()),
                         doctest::Contains("maxDy = inf"), ConfigError);
    CHECK_THROWS_WITH_AS(TranslateImageTransform({1, 0}, {0, 0}),
                         doctest::Contains("TranslateImageTransform: dx range [1, 0]"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(
        TranslateImageTransform({0, 0}, {0, std::numeric_limits<double>::quiet_NaN()}),
        doctest::Contains("dy range"), ConfigError);
  }
}
