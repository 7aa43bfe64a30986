#include <doctest/doctest.h>

#include <array>

#include "ImageTransformTestUtil.h"
#include "iterators/image/transform/FlipImageTransform.h"
#include "nn/core/Error.h"

using namespace dl4cpp;
using testutil::bitIdentical;
using testutil::numberedImage;
using testutil::transformed;

namespace {

// The expected flip, sample by sample.
Image flippedByHand(const Image& in, bool columns, bool rows) {
  Image out(in.channels, in.height, in.width);
  for (int c = 0; c < in.channels; ++c)
    for (int y = 0; y < in.height; ++y)
      for (int x = 0; x < in.width; ++x)
        out.at(c, y, x) = in.at(c, rows ? in.height - 1 - y : y, columns ? in.width - 1 - x : x);
  return out;
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("FlipImageTransform: horizontal, vertical and both flips are exact, on every channel") {
    for (const auto& [h, w] : std::array<std::array<int, 2>, 3>{{{3, 4}, {4, 3}, {1, 5}}}) {
      const Image image = numberedImage(2, h, w);
      CHECK(bitIdentical(transformed(FlipImageTransform(FlipMode::Horizontal), image, 0),
                         flippedByHand(image, true, false)));
      CHECK(bitIdentical(transformed(FlipImageTransform(FlipMode::Vertical), image, 0),
                         flippedByHand(image, false, true)));
      CHECK(bitIdentical(transformed(FlipImageTransform(FlipMode::Both), image, 0),
                         flippedByHand(image, true, true)));
    }
    // A fixed mode draws nothing.
    CHECK(testutil::drawsUsed(FlipImageTransform(FlipMode::Both), numberedImage(1, 2, 2), 0) == 0);
  }

  TEST_CASE("FlipImageTransform: the random mode picks none, horizontal, vertical or both evenly") {
    const Image image = numberedImage(1, 3, 4);
    const std::array<Image, 4> outcomes = {image, flippedByHand(image, true, false),
                                           flippedByHand(image, false, true),
                                           flippedByHand(image, true, true)};
    const FlipImageTransform flip;
    std::array<int, 4> counts{};
    const int examples = 4000;
    for (int e = 0; e < examples; ++e) {
      const Image out = transformed(flip, image, static_cast<uint64_t>(e));
      int matched = 0;
      for (size_t k = 0; k < outcomes.size(); ++k)
        if (bitIdentical(out, outcomes[k])) ++counts[k], ++matched;
      REQUIRE(matched == 1);
    }
    for (int count : counts) CHECK(count == doctest::Approx(examples / 4).epsilon(0.1));
    CHECK(testutil::drawsUsed(flip, image, 7) == 1);
  }

  TEST_CASE("FlipImageTransform: an empty image is a DataMismatchError") {
    Image empty(1, 0, 3);
    ExampleRandom random(1, 0, 0);
    CHECK_THROWS_WITH_AS(FlipImageTransform(FlipMode::Horizontal).transform(empty, random),
                         doctest::Contains("FlipImageTransform: the image is 1 channels x 0 x 3"),
                         DataMismatchError);
    Image inconsistent(1, 2, 2);
    inconsistent.pixels.pop_back();
    CHECK_THROWS_AS(FlipImageTransform().transform(inconsistent, random), DataMismatchError);
  }
}
