#include <doctest/doctest.h>

#include <vector>

#include "iterators/image/ImageResize.h"
#include "iterators/image/ImageTestUtil.h"
#include "nn/core/Error.h"

using namespace dl4cpp;

namespace {

Image imageOf(int channels, int height, int width, std::vector<float> pixels) {
  Image image(channels, height, width);
  image.pixels = std::move(pixels);
  return image;
}

void checkPixels(const Image& image, const std::vector<float>& expected) {
  REQUIRE(image.pixels.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    CHECK(image.pixels[i] == doctest::Approx(expected[i]).epsilon(1e-6));
  }
}

}  // namespace

TEST_SUITE("iterators.image") {
  TEST_CASE("resize: halving each side averages each 2 x 2 block") {
    const Image in = imageOf(1, 4, 4,
                             {1, 2, 3, 4,     //
                              5, 6, 7, 8,     //
                              9, 10, 11, 12,  //
                              13, 14, 15, 16});
    checkPixels(resize(in, 2, 2), {3.5, 5.5, 11.5, 13.5});
    // Every channel on its own.
    Image two(2, 4, 4);
    for (size_t i = 0; i < 16; ++i) two.pixels[i] = in.pixels[i], two.pixels[16 + i] = 100;
    checkPixels(resize(two, 2, 2), {3.5, 5.5, 11.5, 13.5, 100, 100, 100, 100});
  }

  TEST_CASE("resize: shrinking by a fraction weights each input by the part of it covered") {
    // 3 to 2: output 0 covers inputs 0 and half of 1, output 1 the other half of 1 and 2.
    checkPixels(resize(imageOf(1, 1, 3, {3, 6, 9}), 1, 2), {4, 8});
    checkPixels(resize(imageOf(1, 3, 1, {3, 6, 9}), 2, 1), {4, 8});
    // 5 to 2: 2.5 inputs each.
    checkPixels(resize(imageOf(1, 1, 5, {0, 10, 20, 30, 40}), 1, 2),
                {(0 + 10 + 0.5f * 20) / 2.5f, (0.5f * 20 + 30 + 40) / 2.5f});
  }

  TEST_CASE("resize: doubling interpolates bilinearly between half-pixel centres") {
    // Output x samples the input at (x + 0.5) / 2 - 0.5: -0.25, 0.25, 0.75, 1.25, clamped to the
    // edge samples outside [0, 1].
    const Image in = imageOf(1, 2, 2,
                             {0, 4,  //
                              8, 12});
    checkPixels(resize(in, 4, 4), {0, 1, 3, 4,   //
                                   2, 3, 5, 6,   //
                                   6, 7, 9, 10,  //
                                   8, 9, 11, 12});
    // 2 to 3: (x + 0.5) * 2/3 - 0.5 = -1/6, 1/2, 7/6.
    checkPixels(resize(imageOf(1, 1, 2, {0, 6}), 1, 3), {0, 3, 6});
  }

  TEST_CASE("resize: mixed axes shrink by area along one and interpolate along the other") {
    // Width 4 to 2 (pairs averaged), height 2 to 4 (bilinear).
    const Image in = imageOf(1, 2, 4,
                             {0, 2, 4, 6,  //
                              8, 10, 12, 14});
    checkPixels(resize(in, 4, 2), {1, 5,   //
                                   3, 7,   //
                                   7, 11,  //
                                   9, 13});
    // And the other way round.
    const Image tall = imageOf(1, 4, 2, {0, 8, 2, 10, 4, 12, 6, 14});
    checkPixels(resize(tall, 2, 4), {1, 3, 7, 9,  //
                                     5, 7, 11, 13});
  }

  TEST_CASE("resize: a constant image stays constant, the same size is an exact copy") {
    Image constant(3, 37, 23);
    for (float& v : constant.pixels) v = 201.5f;
    for (const auto& [h, w] : {std::pair{5, 7}, {100, 90}, {37, 50}, {9, 23}, {36, 24}, {1, 1}}) {
      CAPTURE(h);
      CAPTURE(w);
      const Image out = resize(constant, h, w);
      REQUIRE(out.channels == 3);
      REQUIRE(out.height == h);
      REQUIRE(out.width == w);
      for (const float v : out.pixels) REQUIRE(v == doctest::Approx(201.5).epsilon(1e-6));
    }
    const Image pattern = testutil::patternImage(3, 6, 9, 16);
    CHECK(resize(pattern, 6, 9).pixels == pattern.pixels);
  }

  TEST_CASE("resize: sizes below 1 are ConfigErrors, inconsistent images ShapeErrors") {
    const Image image = testutil::patternImage(1, 4, 4, 8);
    CHECK_THROWS_WITH_AS(resize(image, 0, 4), "resize: the size 0 x 4 must be at least 1 x 1",
                         ConfigError);
    CHECK_THROWS_AS(resize(image, 4, -3), ConfigError);
    Image inconsistent = image;
    inconsistent.pixels.pop_back();
    CHECK_THROWS_WITH_AS(resize(inconsistent, 2, 2),
                         "resize: the image's 15 samples do not make 1 channels of 4 x 4 (at "
                         "least 1 each)",
                         ShapeError);
    CHECK_THROWS_AS(resize(Image(), 2, 2), ShapeError);
  }
}
