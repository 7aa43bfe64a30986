#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <vector>

#include "TempDir.h"
#include "iterators/image/ImageDecoder.h"
#include "iterators/image/ImageTestUtil.h"
#include "iterators/image/ImageWriter.h"
#include "iterators/image/JpegTestFiles.h"
#include "nn/core/Error.h"

using namespace dl4cpp;

TEST_SUITE("iterators.image") {
  TEST_CASE("ImageWriter: samples are rounded and clamped to [0, 255], NaN to 0, at both depths") {
    Image image(1, 1, 7);
    image.pixels = {1.4f,
                    1.6f,
                    -5,
                    300,
                    std::numeric_limits<float>::quiet_NaN(),
                    254.5f,
                    std::numeric_limits<float>::infinity()};
    CHECK(ImageDecoder::decode(ImageWriter::encodePng(image), 1, "rounded.png").pixels ==
          std::vector<float>{1, 2, 0, 255, 0, 255, 255});
    // 16 bits: 257 steps a grey level, so 1.4 is stored as round(359.8) = 360.
    const Image deep = ImageDecoder::decode(ImageWriter::encodePng(image, 16), 1, "rounded.png");
    CHECK(deep.pixels[0] == testutil::from16Bit(360));
    CHECK(deep.pixels[2] == 0);
    CHECK(deep.pixels[3] == 255);
    CHECK(deep.pixels[4] == 0);
  }

  TEST_CASE("ImageWriter: writes PNG and JPEG files atomically, replacing what was there") {
    testutil::TempDir dir;
    const Image image = testutil::smoothImage(3, 16, 24);
    ImageWriter::writePng(testutil::patternImage(1, 2, 2, 8), dir / "a.png");
    ImageWriter::writePng(image, dir / "a.png");  // replaces the grey 2 x 2
    CHECK(ImageDecoder::decodeFile(dir / "a.png", 3).pixels == image.pixels);
    ImageWriter::writeJpeg(image, dir / "a.jpg", 90);
    const Image jpeg = ImageDecoder::decodeFile(dir / "a.jpg", 3);
    CHECK(testutil::difference(jpeg, image).mean < 2);
    int files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
      (void)entry;
      ++files;
    }
    CHECK(files == 2);  // no temporary left behind
    // Higher quality, closer and larger.
    CHECK(ImageWriter::encodeJpeg(image, 100).size() > ImageWriter::encodeJpeg(image, 20).size());
  }

  TEST_CASE("ImageWriter: files larger than the encoders' first 64 KiB buffer come out whole") {
    const Image deep = testutil::patternImage(4, 150, 200, 16);
    const std::vector<std::byte> png = ImageWriter::encodePng(deep, 16);
    CHECK(png.size() > 65536 * 2);
    CHECK(ImageDecoder::decode(png, 4, "large.png").pixels == deep.pixels);
    const Image noisy = testutil::patternImage(3, 300, 400, 8);
    const std::vector<std::byte> jpeg = ImageWriter::encodeJpeg(noisy, 100);
    CHECK(jpeg.size() > 65536 * 2);
    // Byte for byte what libjpeg's own memory destination makes of it.
    testutil::JpegOptions options;
    options.quality = 100;
    const std::vector<uint8_t> reference =
        testutil::jpegFile(testutil::interleaved(noisy), 400, 300, 3, options);
    CHECK(std::equal(jpeg.begin(), jpeg.end(), reference.begin(), reference.end(),
                     [](std::byte a, uint8_t b) { return static_cast<uint8_t>(a) == b; }));
  }

  TEST_CASE("ImageWriter: an unwritable path is an IoError naming it") {
    testutil::TempDir dir;
    const std::filesystem::path path = dir / "no-such-folder" / "a.png";
    const Image image = testutil::patternImage(3, 2, 2, 8);
    CHECK_THROWS_WITH_AS(ImageWriter::writePng(image, path), doctest::Contains(path.c_str()),
                         IoError);
    CHECK_THROWS_WITH_AS(ImageWriter::writeJpeg(image, path), doctest::Contains(path.c_str()),
                         IoError);
    CHECK_FALSE(std::filesystem::exists(path));
  }

  TEST_CASE("ImageWriter: depths, qualities and channel counts the formats do not take") {
    const Image rgb = testutil::patternImage(3, 2, 2, 8);
    CHECK_THROWS_WITH_AS(ImageWriter::encodePng(rgb, 12),
                         "writing a PNG: bit depth 12; 8 or 16 are written", ConfigError);
    CHECK_THROWS_WITH_AS(ImageWriter::encodePng(testutil::patternImage(5, 2, 2, 8)),
                         "writing a PNG: 5 channels; PNG holds 1 (grey), 2 (grey+alpha), 3 (RGB) "
                         "or 4 (RGBA)",
                         ConfigError);
    CHECK_THROWS_WITH_AS(ImageWriter::encodeJpeg(rgb, 0),
                         "writing a JPEG: quality 0 is not in 1 to 100", ConfigError);
    CHECK_THROWS_AS(ImageWriter::encodeJpeg(rgb, 101), ConfigError);
    for (const int channels : {2, 4})
      CHECK_THROWS_WITH_AS(ImageWriter::encodeJpeg(testutil::patternImage(channels, 2, 2, 8)),
                           doctest::Contains("JPEG holds 1 (grey) or 3 (RGB), no alpha"),
                           ConfigError);
    Image inconsistent = rgb;
    inconsistent.pixels.resize(5);
    CHECK_THROWS_WITH_AS(ImageWriter::encodePng(inconsistent),
                         "writing a PNG: the image's 5 samples do not make 3 channels of 2 x 2 (at "
                         "least 1 each)",
                         ShapeError);
    CHECK_THROWS_AS(ImageWriter::encodeJpeg(Image()), ShapeError);
    Image wide(1, 1, 65501);
    CHECK_THROWS_WITH_AS(ImageWriter::encodeJpeg(wide),
                         "writing a JPEG: 1 x 65501 is larger than the format's 65500 a side",
                         ShapeError);
  }
}
