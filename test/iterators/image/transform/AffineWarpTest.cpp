#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "ImageTransformTestUtil.h"
#include "iterators/image/transform/AffineWarp.h"

using namespace dl4cpp;
using testutil::bitIdentical;
using testutil::numberedImage;

TEST_SUITE("iterators") {
  TEST_CASE("warpAffine: the identity and integer shifts copy samples exactly") {
    const Image image = numberedImage(3, 4, 5);
    CHECK(bitIdentical(warpAffine(image, AffineMap{}, 4, 5, WarpBorder::Zero), image));
    CHECK(bitIdentical(warpAffine(image, AffineMap{}, 4, 5, WarpBorder::Replicate), image));
    CHECK(bitIdentical(
        warpAffine(image, AffineMap::rotation(2, 1.5, 0, 1).inverse(), 4, 5, WarpBorder::Zero),
        image));
    // Destination (x, y) reads source (x + 1, y - 2).
    const Image shifted = warpAffine(image, AffineMap::translation(1, -2), 4, 5, WarpBorder::Zero);
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 5; ++x) {
          const bool inside = x + 1 < 5 && y - 2 >= 0;
          CHECK(shifted.at(c, y, x) == (inside ? image.at(c, y - 2, x + 1) : 0.0f));
        }
  }

  TEST_CASE("warpAffine: bilinear between samples, 0 or the edge sample beyond the image") {
    Image row(1, 1, 2);
    row.pixels = {10, 30};
    // Half a pixel to the left: the destination reads source x - 0.5.
    const AffineMap halfLeft = AffineMap::translation(-0.5, 0);
    const Image zero = warpAffine(row, halfLeft, 1, 2, WarpBorder::Zero);
    CHECK(zero.pixels == std::vector<float>{5, 20});  // 0 blended in at the left edge
    const Image replicate = warpAffine(row, halfLeft, 1, 2, WarpBorder::Replicate);
    CHECK(replicate.pixels == std::vector<float>{10, 20});
    // Far outside: 0, or the nearest corner.
    const AffineMap far = AffineMap::translation(1e12, -1e12);
    CHECK(warpAffine(row, far, 1, 2, WarpBorder::Zero).pixels == std::vector<float>{0, 0});
    CHECK(warpAffine(row, far, 1, 2, WarpBorder::Replicate).pixels == std::vector<float>{30, 30});
  }

  TEST_CASE("AffineMap: rotation follows OpenCV's getRotationMatrix2D and inverse() undoes it") {
    const AffineMap m = AffineMap::rotation(3, 2, 30, 1.5);
    const double a = 1.5 * std::cos(std::numbers::pi / 6), b = 1.5 * std::sin(std::numbers::pi / 6);
    CHECK(m.xx == doctest::Approx(a));
    CHECK(m.xy == doctest::Approx(b));
    CHECK(m.x0 == doctest::Approx((1 - a) * 3 - b * 2));
    CHECK(m.yx == doctest::Approx(-b));
    CHECK(m.yy == doctest::Approx(a));
    CHECK(m.y0 == doctest::Approx(b * 3 + (1 - a) * 2));
    // The centre is fixed; a point and its image round-trip.
    CHECK(m.xx * 3 + m.xy * 2 + m.x0 == doctest::Approx(3));
    const AffineMap inv = m.inverse();
    const double px = m.xx * 7 + m.xy * -4 + m.x0, py = m.yx * 7 + m.yy * -4 + m.y0;
    CHECK(inv.xx * px + inv.xy * py + inv.x0 == doctest::Approx(7));
    CHECK(inv.yx * px + inv.yy * py + inv.y0 == doctest::Approx(-4));
  }
}
