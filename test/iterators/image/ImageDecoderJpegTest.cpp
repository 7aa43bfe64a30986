#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "iterators/image/ImageDecoder.h"
#include "iterators/image/ImageResize.h"
#include "iterators/image/ImageTestUtil.h"
#include "iterators/image/ImageWriter.h"
#include "iterators/image/JpegTestFiles.h"
#include "iterators/image/PngTestFiles.h"

using namespace dl4cpp;

namespace {

Image decode(const std::vector<uint8_t>& file, int channels, DecodeSizeHint hint = {}) {
  return ImageDecoder::decode(testutil::asBytes(file), channels, "test.jpg", hint);
}

// One CMYK colour over an 8 x 8 image, as the file stores it.
std::vector<uint8_t> cmykFile(std::vector<uint8_t> cmyk, J_COLOR_SPACE stored, bool adobe) {
  std::vector<uint8_t> samples;
  for (int i = 0; i < 64; ++i) samples.insert(samples.end(), cmyk.begin(), cmyk.end());
  return testutil::jpegFile(samples, 8, 8, 4, {JCS_CMYK, stored, adobe});
}

// Every pixel of the 8 x 8 image within `tolerance` of the colour.
void checkColour(const Image& image, std::vector<float> rgb, float tolerance) {
  REQUIRE(image.pixels.size() == 3 * 64);
  int off = 0;
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < 64; ++i)
      if (std::abs(image.pixels[static_cast<size_t>(c * 64 + i)] - rgb[static_cast<size_t>(c)]) >
          tolerance)
        ++off;
  CHECK(off == 0);
}

}  // namespace

TEST_SUITE("iterators.image") {
  TEST_CASE("ImageDecoder: RGB and grey JPEGs decode close to what was written, to 1, 3 and 4") {
    const Image rgb = testutil::smoothImage(3, 24, 40);
    const std::vector<std::byte> file = ImageWriter::encodeJpeg(rgb, 95);
    const Image decoded = ImageDecoder::decode(file, 3, "smooth.jpg");
    REQUIRE(decoded.channels == 3);
    REQUIRE(decoded.height == 24);
    REQUIRE(decoded.width == 40);
    const testutil::Difference d = testutil::difference(decoded, rgb);
    CHECK(d.mean < 1.5);
    CHECK(d.max < 12);

    const Image rgba = ImageDecoder::decode(file, 4, "smooth.jpg");
    CHECK(std::vector<float>(rgba.pixels.begin(), rgba.pixels.begin() + 3 * 24 * 40) ==
          decoded.pixels);
    CHECK(rgba.at(3, 23, 39) == 255);

    // Grey from a colour JPEG: its Y plane, the rounded luma of the RGB it decodes to.
    const Image y = ImageDecoder::decode(file, 1, "smooth.jpg");
    Image luma(1, 24, 40);
    for (size_t i = 0; i < luma.pixels.size(); ++i)
      luma.pixels[i] = 0.299f * decoded.pixels[i] + 0.587f * decoded.pixels[i + 960] +
                       0.114f * decoded.pixels[i + 1920];
    CHECK(testutil::difference(y, luma).max < 3);

    const Image grey = testutil::smoothImage(1, 17, 9);
    const std::vector<std::byte> greyFile = ImageWriter::encodeJpeg(grey, 95);
    const Image greyDecoded = ImageDecoder::decode(greyFile, 1, "grey.jpg");
    CHECK(testutil::difference(greyDecoded, grey).mean < 1.5);
    const Image replicated = ImageDecoder::decode(greyFile, 3, "grey.jpg");
    for (int c = 0; c < 3; ++c)
      for (int i = 0; i < 17 * 9; ++i)
        CHECK(replicated.pixels[static_cast<size_t>(c * 17 * 9 + i)] ==
              greyDecoded.pixels[static_cast<size_t>(i)]);
  }

  TEST_CASE("ImageDecoder: progressive, arithmetic-coded, restart-marked and 4:4:4 JPEGs") {
    const Image rgb = testutil::smoothImage(3, 20, 30);
    const std::vector<uint8_t> samples = testutil::interleaved(rgb);
    testutil::JpegOptions progressive;
    progressive.progressive = true;
    testutil::JpegOptions arithmetic;
    arithmetic.arithmetic = true;
    testutil::JpegOptions restarts;
    restarts.restartInterval = 2;
    testutil::JpegOptions fullChroma;
    fullChroma.fullChroma = true;
    for (const testutil::JpegOptions& options : {progressive, arithmetic, restarts, fullChroma}) {
      const Image decoded = decode(testutil::jpegFile(samples, 30, 20, 3, options), 3);
      REQUIRE(decoded.height == 20);
      REQUIRE(decoded.width == 30);
      CHECK(testutil::difference(decoded, rgb).mean < 1.5);
    }
  }

  TEST_CASE("ImageDecoder: CMYK and YCCK JPEGs become RGB, inverted when Adobe's marker says so") {
    // Cyan 0, magenta and yellow full, black 0: red. Without Adobe's marker the samples are ink.
    checkColour(decode(cmykFile({0, 255, 255, 0}, JCS_CMYK, false), 3), {255, 0, 0}, 2);
    // Photoshop's files: an Adobe marker (which YCCK needs: it names the transform) and inverted
    // samples (255 = no ink). All inks at half: 255 (1 - 0.5)^2, about 64.
    for (const J_COLOR_SPACE stored : {JCS_CMYK, JCS_YCCK}) {
      CAPTURE(stored);
      checkColour(decode(cmykFile({255, 0, 0, 255}, stored, true), 3), {255, 0, 0}, 2);
      checkColour(decode(cmykFile({128, 128, 128, 128}, stored, true), 3), {64.25f, 64.25f, 64.25f},
                  2);
    }
    const Image grey = decode(cmykFile({0, 255, 255, 0}, JCS_CMYK, false), 1);
    CHECK(grey.pixels[0] == doctest::Approx(0.299 * 255).epsilon(0.02));
  }

  TEST_CASE(
      "ImageDecoder: a size hint decodes a JPEG at the smallest DCT scale at least that big") {
    const Image rgb = testutil::smoothImage(3, 224, 224);
    const std::vector<std::byte> file = ImageWriter::encodeJpeg(rgb, 95);
    struct Case {
      DecodeSizeHint hint;
      int side;
    };
    // n/8 of 224 for the smallest n with 224 n / 8 >= the hint in both dimensions, but 8 for 7.
    for (const Case& c : {Case{{28, 28}, 28}, Case{{56, 56}, 56}, Case{{57, 20}, 84},
                          Case{{0, 100}, 112}, Case{{168, 1}, 168}, Case{{190, 190}, 224},
                          Case{{224, 224}, 224}, Case{{300, 300}, 224}, Case{{0, 0}, 224}}) {
      CAPTURE(c.hint.height);
      CAPTURE(c.hint.width);
      const Image image = ImageDecoder::decode(file, 3, "big.jpg", c.hint);
      CHECK(image.height == c.side);
      CHECK(image.width == c.side);
    }
    // Close to a full decode resized to the same size.
    const Image scaled = ImageDecoder::decode(file, 3, "big.jpg", {56, 56});
    const Image resized = resize(ImageDecoder::decode(file, 3, "big.jpg"), 56, 56);
    const testutil::Difference d = testutil::difference(scaled, resized);
    CHECK(d.mean < 1.5);
    CHECK(d.max < 8);
    // Sides that do not divide: ceil(100 n / 8) x ceil(75 n / 8); n = 3 is the first with both
    // at least 20 (n = 2 gives 25 x 19).
    const std::vector<std::byte> odd = ImageWriter::encodeJpeg(testutil::smoothImage(1, 75, 100));
    const Image oddScaled = ImageDecoder::decode(odd, 1, "odd.jpg", {20, 20});
    CHECK(oddScaled.height == 29);
    CHECK(oddScaled.width == 38);
    // A PNG ignores the hint.
    const std::vector<std::byte> png = ImageWriter::encodePng(testutil::smoothImage(1, 75, 100));
    CHECK(ImageDecoder::decode(png, 1, "odd.png", {20, 20}).width == 100);
  }
}
