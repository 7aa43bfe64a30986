#include <doctest/doctest.h>

#include <stdexcept>

#include "server/PixelRange.h"

using samples::server::parsePixelRange;
using samples::server::pixelFeature;
using samples::server::PixelRange;
using samples::server::pixelRangeName;

TEST_SUITE("samples") {
  TEST_CASE("PixelRange: the names --pixel-range takes, and nothing else") {
    for (const PixelRange range : {PixelRange::UNIT, PixelRange::LEVELS})
      CHECK(parsePixelRange(pixelRangeName(range)) == range);
    CHECK(pixelRangeName(PixelRange::UNIT) == "0-1");
    CHECK(pixelRangeName(PixelRange::LEVELS) == "0-255");
    for (const char* name : {"", "0-254", "0..255", "levels", "0-1 "})
      CHECK_THROWS_WITH_AS(
          parsePixelRange(name),
          doctest::Contains("--pixel-range must be '0-1' (grey level / 255) or '0-255'"),
          std::invalid_argument);
  }

  TEST_CASE("PixelRange: 0-1 divides the grey level by 255, 0-255 keeps it") {
    CHECK(pixelFeature(51, PixelRange::UNIT) == static_cast<float>(51 / 255.0));
    CHECK(pixelFeature(255, PixelRange::UNIT) == 1.0f);
    CHECK(pixelFeature(51, PixelRange::LEVELS) == 51.0f);
    CHECK(pixelFeature(12.5, PixelRange::LEVELS) == 12.5f);
  }
}
