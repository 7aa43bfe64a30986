#include <doctest/doctest.h>

#include <set>
#include <utility>

#include "ImageTransformTestUtil.h"
#include "iterators/image/transform/CropImageTransform.h"
#include "iterators/image/transform/RandomCropTransform.h"
#include "nn/core/Error.h"

using namespace dl4cpp;
using testutil::bitIdentical;
using testutil::numberedImage;
using testutil::transformed;

namespace {

// The top-left corner of `window` within a numberedImage, after checking that `window` is a window
// of it: every sample, on every channel, where the corner says.
std::pair<int, int> cornerOf(const Image& window, const Image& numbered) {
  const int top = static_cast<int>(window.at(0, 0, 0)) / 10;
  const int left = static_cast<int>(window.at(0, 0, 0)) % 10;
  REQUIRE(window.channels == numbered.channels);
  REQUIRE(top + window.height <= numbered.height);
  REQUIRE(left + window.width <= numbered.width);
  for (int c = 0; c < window.channels; ++c)
    for (int y = 0; y < window.height; ++y)
      for (int x = 0; x < window.width; ++x)
        REQUIRE(window.at(c, y, x) == numbered.at(c, top + y, left + x));
  return {top, left};
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("CropImageTransform: each margin drawn from 0 to its maximum, the rest kept exactly") {
    const Image image = numberedImage(2, 8, 9);
    const CropImageTransform crop(2, 1, 3, 0);  // top, left, bottom, right
    std::set<int> tops, lefts, bottoms;
    for (uint64_t e = 0; e < 300; ++e) {
      const Image out = transformed(crop, image, e);
      const auto [top, left] = cornerOf(out, image);
      CHECK(left + out.width == 9);  // no right margin
      tops.insert(top);
      lefts.insert(left);
      bottoms.insert(8 - top - out.height);
    }
    CHECK(tops == std::set<int>{0, 1, 2});
    CHECK(lefts == std::set<int>{0, 1});
    CHECK(bottoms == std::set<int>{0, 1, 2, 3});
    CHECK(testutil::drawsUsed(crop, image, 0) == 4);
  }

  TEST_CASE("CropImageTransform: no margin is the identity, margins beyond the image are clamped") {
    const Image image = numberedImage(3, 4, 5);
    CHECK(bitIdentical(transformed(CropImageTransform(0), image, 0), image));
    // As DataVec: the corner stays inside and at least one row and column remain.
    for (uint64_t e = 0; e < 100; ++e) {
      const Image out = transformed(CropImageTransform(50), image, e);
      CHECK(out.height >= 1);
      CHECK(out.width >= 1);
      cornerOf(out, image);
    }
  }

  TEST_CASE("RandomCropTransform: a fixed-size window at every position, content exact") {
    const Image image = numberedImage(2, 5, 6);
    const RandomCropTransform crop(2, 3);
    std::set<std::pair<int, int>> corners;
    for (uint64_t e = 0; e < 400; ++e) {
      const Image out = transformed(crop, image, e);
      CHECK(out.height == 2);
      CHECK(out.width == 3);
      corners.insert(cornerOf(out, image));
    }
    CHECK(corners.size() == 4 * 4);
    CHECK(testutil::drawsUsed(crop, image, 0) == 2);
    CHECK(bitIdentical(transformed(RandomCropTransform(5, 6), image, 9), image));
  }

  TEST_CASE("RandomCropTransform: a window larger than the image is a DataMismatchError") {
    Image image = numberedImage(1, 5, 6);
    ExampleRandom random(1, 0, 0);
    CHECK_THROWS_WITH_AS(RandomCropTransform(6, 6).transform(image, random),
                         doctest::Contains("cannot crop 6 x 6 (height x width) from a 5 x 6 image"),
                         DataMismatchError);
    CHECK_THROWS_AS(RandomCropTransform(2, 7).transform(image, random), DataMismatchError);
    CHECK(image.height == 5);  // left as it was
  }

  TEST_CASE("CropImageTransform, RandomCropTransform: parameter errors name the parameter") {
    CHECK_THROWS_WITH_AS(
        CropImageTransform(-1),
        doctest::Contains("CropImageTransform: cropTop = -1 must be in [0, 65536]"), ConfigError);
    CHECK_THROWS_WITH_AS(CropImageTransform(0, 0, 0, 70000), doctest::Contains("cropRight = 70000"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(CropImageTransform(0, -3, 0, 0), doctest::Contains("cropLeft = -3"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(CropImageTransform(0, 0, -3, 0), doctest::Contains("cropBottom = -3"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(RandomCropTransform(0, 5),
                         doctest::Contains("RandomCropTransform: height = 0 must be in [1, 65536]"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(RandomCropTransform(5, -1), doctest::Contains("width = -1"), ConfigError);
  }
}
