#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "iterators/image/ImageDecoder.h"
#include "iterators/image/ImageTestUtil.h"
#include "iterators/image/ImageWriter.h"
#include "iterators/image/PngTestFiles.h"

using namespace dl4cpp;
using testutil::Bytes;

namespace {

float luma(float r, float g, float b) { return 0.299f * r + 0.587f * g + 0.114f * b; }

// What ImageDecoder's channel rules make of pixel (y, x) of `source` (1 grey, 2 grey+alpha, 3 RGB,
// 4 RGBA) in output channel c of `channels`.
float expectedSample(const Image& source, int channels, int c, int y, int x) {
  const bool colour = source.channels >= 3;
  auto s = [&](int k) { return source.at(k, y, x); };
  const float grey = colour ? luma(s(0), s(1), s(2)) : s(0);
  if (channels == 1) return grey;
  if (c == 3) return source.channels == 2 ? s(1) : source.channels == 4 ? s(3) : 255.0f;
  return colour ? s(c) : grey;
}

Image decode(const Bytes& file, int channels) {
  return ImageDecoder::decode(testutil::asBytes(file), channels, "test.png");
}

}  // namespace

TEST_SUITE("iterators.image") {
  TEST_CASE("ImageDecoder: PNGs of 1 to 4 channels at 8 and 16 bits decode exactly to 1, 3 and 4") {
    for (const int bitDepth : {8, 16})
      for (const int sourceChannels : {1, 2, 3, 4}) {
        const Image source = testutil::patternImage(sourceChannels, 5, 7, bitDepth);
        const std::vector<std::byte> file = ImageWriter::encodePng(source, bitDepth);
        for (const int channels : {1, 3, 4}) {
          CAPTURE(bitDepth);
          CAPTURE(sourceChannels);
          CAPTURE(channels);
          const Image image = ImageDecoder::decode(file, channels, "pattern.png");
          REQUIRE(image.channels == channels);
          REQUIRE(image.height == 5);
          REQUIRE(image.width == 7);
          REQUIRE(image.pixels.size() == static_cast<size_t>(channels * 5 * 7));
          int wrong = 0;
          for (int c = 0; c < channels; ++c)
            for (int y = 0; y < 5; ++y)
              for (int x = 0; x < 7; ++x) {
                const float expected = expectedSample(source, channels, c, y, x);
                // Copied samples are exact; a luma is a sum of three products.
                if (channels == 1 && sourceChannels >= 3
                        ? std::abs(image.at(c, y, x) - expected) > 1e-4f
                        : image.at(c, y, x) != expected)
                  ++wrong;
              }
          CHECK(wrong == 0);
        }
      }
  }

  TEST_CASE("ImageDecoder: the channel rules on hand-computed values") {
    Image rgba(4, 1, 2);
    const float pixels[2][4] = {{255, 0, 0, 7}, {10, 20, 30, 40}};
    for (int x = 0; x < 2; ++x)
      for (int c = 0; c < 4; ++c) rgba.at(c, 0, x) = pixels[x][c];
    const std::vector<std::byte> rgbaFile = ImageWriter::encodePng(rgba);
    // RGBA to grey: BT.601 luma of RGB, alpha dropped.
    const Image grey = ImageDecoder::decode(rgbaFile, 1, "rgba.png");
    CHECK(grey.at(0, 0, 0) == doctest::Approx(76.245).epsilon(1e-6));
    CHECK(grey.at(0, 0, 1) == doctest::Approx(18.15).epsilon(1e-6));
    // RGBA to RGB: alpha dropped, not composited.
    const Image rgb = ImageDecoder::decode(rgbaFile, 3, "rgba.png");
    CHECK(rgb.pixels == std::vector<float>{255, 10, 0, 20, 0, 30});

    Image greyAlpha(2, 1, 1);
    greyAlpha.pixels = {100, 50};
    const Image fromGreyAlpha =
        ImageDecoder::decode(ImageWriter::encodePng(greyAlpha), 4, "ga.png");
    CHECK(fromGreyAlpha.pixels ==
          std::vector<float>{100, 100, 100, 50});  // grey repeated, alpha kept

    Image colour(3, 1, 1);
    colour.pixels = {1, 2, 3};
    CHECK(ImageDecoder::decode(ImageWriter::encodePng(colour), 4, "rgb.png").pixels ==
          std::vector<float>{1, 2, 3, 255});  // opaque alpha added

    // 16 bits: scaled by 255/65535.
    Image deep(1, 1, 3);
    deep.pixels = {255, 1, 0};  // written as 65535, 257, 0
    CHECK(ImageDecoder::decode(ImageWriter::encodePng(deep, 16), 1, "deep.png").pixels ==
          std::vector<float>{255, 1, 0});
    const Bytes oneStep = testutil::pngFile({1, 1, 16, 0}, {{0x00, 0x01}});  // sample 1 of 65535
    CHECK(decode(oneStep, 1).pixels[0] == static_cast<float>(255.0 / 65535.0));
  }

  TEST_CASE("ImageDecoder: grey PNGs of 1, 2 and 4 bits widen to 8 bits by repeating their bits") {
    for (const int bits : {1, 2, 4}) {
      CAPTURE(bits);
      const int levels = 1 << bits;
      Bytes values;
      for (int v = 0; v < levels; ++v) values.push_back(static_cast<uint8_t>(v));
      const Bytes file =
          testutil::pngFile({static_cast<uint32_t>(levels), 1, static_cast<uint8_t>(bits), 0},
                            {testutil::packBits(values, bits)});
      const Image image = decode(file, 3);
      REQUIRE(image.width == levels);
      for (int v = 0; v < levels; ++v)
        for (int c = 0; c < 3; ++c)
          CHECK(image.at(c, 0, v) == static_cast<float>(v * 255 / (levels - 1)));
    }
  }

  TEST_CASE("ImageDecoder: palette PNGs of 1 to 8 bits, with tRNS alpha for the first entries") {
    const Bytes plte = testutil::pngChunk("PLTE", {255, 0, 0, 0, 128, 0, 10, 20, 30});
    const Bytes trns = testutil::pngChunk("tRNS", {0, 99});  // entry 2 stays opaque
    for (const int bits : {1, 2, 4, 8}) {
      CAPTURE(bits);
      const Bytes indices = bits == 1 ? Bytes{0, 1, 1, 0} : Bytes{0, 1, 2, 1};
      const Bytes file = testutil::pngFile({4, 1, static_cast<uint8_t>(bits), 3},
                                           {testutil::packBits(indices, bits)}, {plte, trns});
      const Image rgba = decode(file, 4);
      const float colours[3][4] = {{255, 0, 0, 0}, {0, 128, 0, 99}, {10, 20, 30, 255}};
      for (int x = 0; x < 4; ++x)
        for (int c = 0; c < 4; ++c) CHECK(rgba.at(c, 0, x) == colours[indices[x]][c]);
      const Image grey = decode(file, 1);
      CHECK(grey.at(0, 0, 1) == doctest::Approx(0.587 * 128).epsilon(1e-6));
    }
  }

  TEST_CASE("ImageDecoder: a grey or RGB PNG's tRNS colour becomes alpha 0, other pixels 255") {
    const Bytes grey =
        testutil::pngFile({3, 1, 8, 0}, {{5, 6, 5}}, {testutil::pngChunk("tRNS", {0, 5})});
    CHECK(decode(grey, 4).pixels == std::vector<float>{5, 6, 5, 5, 6, 5, 5, 6, 5, 0, 255, 0});
    // 16-bit RGB with a transparent colour: alpha at 16 bits, scaled as the samples.
    const Bytes rgb16 =
        testutil::pngFile({2, 1, 16, 2}, {{0, 1, 0, 2, 0, 3, 0xff, 0xff, 0, 0, 0, 0}},
                          {testutil::pngChunk("tRNS", {0, 1, 0, 2, 0, 3})});
    const Image rgba = decode(rgb16, 4);
    CHECK(rgba.at(3, 0, 0) == 0);
    CHECK(rgba.at(3, 0, 1) == 255);
    CHECK(rgba.at(0, 0, 1) == 255);
  }

  TEST_CASE("ImageDecoder: an Adam7-interlaced PNG decodes to the same pixels as a plain one") {
    const int width = 11, height = 10;
    std::vector<Bytes> rows;
    for (int y = 0; y < height; ++y) {
      Bytes row;
      for (int x = 0; x < width * 3; ++x) row.push_back(static_cast<uint8_t>(y * 31 + x * 7));
      rows.push_back(row);
    }
    const Bytes plain = testutil::pngFile({width, height, 8, 2}, rows);
    const Bytes interlaced =
        testutil::pngFile({width, height, 8, 2, 1}, testutil::adam7Scanlines(rows, width, 3));
    CHECK(decode(interlaced, 3).pixels == decode(plain, 3).pixels);
    CHECK(decode(plain, 3).at(2, 9, 10) ==
          static_cast<float>(static_cast<uint8_t>(9 * 31 + 32 * 7)));
  }
}
