#include <doctest/doctest.h>

#include <limits>
#include <set>
#include <utility>
#include <vector>

#include "ImageTransformTestUtil.h"
#include "iterators/image/transform/ScaleImageTransform.h"
#include "nn/core/Error.h"

using namespace dl4cpp;
using testutil::bitIdentical;
using testutil::numberedImage;
using testutil::transformed;

TEST_SUITE("iterators") {
  TEST_CASE("ScaleImageTransform: the size changes by up to dx, dy pixels, every size occurring") {
    const Image image = numberedImage(2, 6, 8);
    const ScaleImageTransform scale(3, 1);  // width 5..11, height 5..7
    std::set<std::pair<int, int>> sizes;
    for (uint64_t e = 0; e < 400; ++e) {
      const Image out = transformed(scale, image, e);
      CHECK(out.channels == 2);
      CHECK(out.pixels.size() == static_cast<size_t>(2 * out.height * out.width));
      sizes.insert({out.height, out.width});
    }
    std::set<std::pair<int, int>> expected;
    for (int h = 5; h <= 7; ++h)
      for (int w = 5; w <= 11; ++w) expected.insert({h, w});
    CHECK(sizes == expected);
    CHECK(testutil::drawsUsed(scale, image, 0) == 2);
  }

  TEST_CASE("ScaleImageTransform: resizes as OpenCV's bilinear resize, edges replicated") {
    Image row(1, 1, 2);
    row.pixels = {0, 40};
    // Width 2 -> 4 (dx = 2 draws widths 1..4): destination x reads source (x + 0.5) / 2 - 0.5.
    const ScaleImageTransform scale(2, 0);
    bool seen = false;
    for (uint64_t e = 0; e < 100 && !seen; ++e) {
      const Image out = transformed(scale, row, e);
      if (out.width != 4) continue;
      seen = true;
      CHECK(out.pixels == std::vector<float>{0, 10, 30, 40});
    }
    CHECK(seen);
    // A constant image stays constant at any size: no darkened border.
    Image grey(3, 4, 4);
    grey.pixels.assign(grey.pixels.size(), 77.0f);
    for (uint64_t e = 0; e < 20; ++e)
      for (float v : transformed(ScaleImageTransform(3), grey, e).pixels) CHECK(v == 77.0f);
  }

  TEST_CASE("ScaleImageTransform: no change is exactly the identity, and sizes stay >= 1") {
    const Image image = numberedImage(3, 5, 4);
    CHECK(bitIdentical(transformed(ScaleImageTransform(0), image, 1), image));
    // A change larger than the image shrinks it to one pixel at the least.
    for (uint64_t e = 0; e < 50; ++e) {
      const Image out = transformed(ScaleImageTransform(20), image, e);
      CHECK(out.height >= 1);
      CHECK(out.width >= 1);
      CHECK(out.height <= 25);
    }
  }

  TEST_CASE("ScaleImageTransform: parameter errors name the parameter") {
    CHECK_THROWS_WITH_AS(ScaleImageTransform(-1), doctest::Contains("ScaleImageTransform: dx = -1"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(ScaleImageTransform(2, 1e9),
                         doctest::Contains("dy = 1000000000 must be in"), ConfigError);
    CHECK_THROWS_WITH_AS(ScaleImageTransform(std::numeric_limits<double>::quiet_NaN(), 0),
                         doctest::Contains("dx = nan"), ConfigError);
  }
}
