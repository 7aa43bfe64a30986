#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "TestPaths.h"
#include "fuzz/ImageDecoderFuzzInput.h"
#include "iterators/image/ImageTestUtil.h"
#include "iterators/image/ImageWriter.h"
#include "iterators/image/JpegTestFiles.h"
#include "iterators/image/PngTestFiles.h"
#include "nn/core/AtomicFile.h"

using namespace dl4cpp;
using testutil::Bytes;

namespace {

const std::filesystem::path kCorpus = testutil::testDataDir() / "image-decoder-corpus";

void save(const std::string& name, const Bytes& bytes) {
  writeFileAtomically(kCorpus / name, testutil::asBytes(bytes));
}
void save(const std::string& name, const std::vector<std::byte>& bytes) {
  writeFileAtomically(kCorpus / name, bytes);
}

// Tiny files of every kind the decoders read (seed-*), and some they must refuse (reject-*).
void writeSeeds() {
  for (const int depth : {8, 16})
    for (const auto& [channels, kind] :
         {std::pair{1, "grey"}, {2, "grey-alpha"}, {3, "rgb"}, {4, "rgba"}})
      save("seed-" + std::string(kind) + std::to_string(depth) + ".png",
           ImageWriter::encodePng(testutil::patternImage(channels, 5, 6, depth), depth));
  for (const int bits : {1, 2, 4})
    save("seed-grey" + std::to_string(bits) + ".png",
         testutil::pngFile({8, 2, static_cast<uint8_t>(bits), 0},
                           {testutil::packBits({0, 1, 0, 1, 1, 1, 0, 0}, bits),
                            testutil::packBits({1, 0, 1, 0, 0, 0, 1, 1}, bits)}));
  const Bytes plte = testutil::pngChunk("PLTE", {255, 0, 0, 0, 128, 0, 10, 20, 30});
  const Bytes trns = testutil::pngChunk("tRNS", {0, 99});
  save("seed-palette4-trns.png",
       testutil::pngFile({4, 2, 4, 3}, {testutil::packBits({0, 1, 2, 1}, 4), {0x21, 0x00}},
                         {plte, trns}));
  save("seed-palette8.png", testutil::pngFile({3, 1, 8, 3}, {{2, 1, 0}}, {plte}));
  save("seed-grey8-trns.png",
       testutil::pngFile({3, 1, 8, 0}, {{5, 6, 5}}, {testutil::pngChunk("tRNS", {0, 5})}));
  std::vector<Bytes> rows;
  for (int y = 0; y < 9; ++y) {
    Bytes row;
    for (int x = 0; x < 9 * 4; ++x) row.push_back(static_cast<uint8_t>(y * 29 + x * 7));
    rows.push_back(row);
  }
  save("seed-interlaced-rgba8.png",
       testutil::pngFile({9, 9, 8, 6, 1}, testutil::adam7Scanlines(rows, 9, 4)));

  const Image rgb = testutil::smoothImage(3, 16, 16);
  const Bytes samples = testutil::interleaved(rgb);
  save("seed-rgb420.jpg", ImageWriter::encodeJpeg(rgb, 90));
  save("seed-grey.jpg", ImageWriter::encodeJpeg(testutil::smoothImage(1, 16, 16), 90));
  testutil::JpegOptions options;
  options.fullChroma = true;
  save("seed-rgb444.jpg", testutil::jpegFile(samples, 16, 16, 3, options));
  options = {};
  options.progressive = true;
  save("seed-progressive.jpg", testutil::jpegFile(samples, 16, 16, 3, options));
  options = {};
  options.arithmetic = true;
  save("seed-arithmetic.jpg", testutil::jpegFile(samples, 16, 16, 3, options));
  options = {};
  options.restartInterval = 1;
  save("seed-restarts.jpg", testutil::jpegFile(samples, 16, 16, 3, options));
  Bytes cmyk;
  for (size_t i = 0; i < samples.size(); i += 3)
    cmyk.insert(cmyk.end(), {samples[i], samples[i + 1], samples[i + 2], 40});
  save("seed-cmyk.jpg", testutil::jpegFile(cmyk, 16, 16, 4, {JCS_CMYK, JCS_CMYK, false}));
  save("seed-ycck-adobe.jpg", testutil::jpegFile(cmyk, 16, 16, 4, {JCS_CMYK, JCS_YCCK, true}));

  const Bytes png = testutil::pngFile({2, 2, 8, 0}, {{1, 2}, {3, 4}});
  save("reject-truncated.png", Bytes(png.begin(), png.end() - 20));
  save("reject-huge.png", testutil::pngFile({70000, 70000, 8, 0}, {{0}}));
  const Bytes jpeg = testutil::jpegFile(samples, 16, 16, 3, {});
  save("reject-truncated.jpg", Bytes(jpeg.begin(), jpeg.end() - 40));
  save("reject-gif.gif", {'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0x80, 0, 0});
  save("reject-text.txt", {'l', 'a', 'b', 'e', 'l', '\n'});
}

}  // namespace

TEST_SUITE("iterators.image") {
  TEST_CASE(
      "ImageDecoder: the committed fuzz corpus replays through the fuzz target's entry point") {
    // Regenerate the seeds: DL4CPP_WRITE_FIXTURES=1 build/test/dl4cpp_tests
    // -tc="ImageDecoder: the committed fuzz corpus*"
    if (std::getenv("DL4CPP_WRITE_FIXTURES")) writeSeeds();

    int files = 0, seeds = 0;
    for (const auto& entry : std::filesystem::directory_iterator(kCorpus)) {
      const std::string name = entry.path().filename().string();
      CAPTURE(name);
      const std::vector<std::byte> file = readWholeFile(entry.path());
      const auto* begin = reinterpret_cast<const uint8_t*>(file.data());
      const std::vector<uint8_t> bytes(begin, begin + file.size());
      int accepted = 0;
      CHECK_NOTHROW(accepted = fuzz::decodeImageInput(bytes));  // only dl4cpp::Error may occur
      if (name.rfind("seed-", 0) == 0) {
        CHECK(accepted == (fuzz::isPng(bytes) ? 4 : 2));  // every decode, as given and repaired
        ++seeds;
      } else if (name.rfind("reject-", 0) == 0) {
        CHECK(accepted == 0);
      }
      ++files;
    }
    CHECK(seeds >= 20);
    CHECK(files > seeds);
  }

  TEST_CASE(
      "ImageDecoder fuzz input: the CRC repair carries a damaged PNG header to libpng's checks") {
    Bytes png = testutil::pngFile({2, 2, 8, 0}, {{1, 2}, {3, 4}});
    png[24] = 3;  // bit depth 3, CRC now wrong
    CHECK_THROWS_WITH_AS(ImageDecoder::decode(testutil::asBytes(png), 1, "x"),
                         "x: corrupt PNG: IHDR: CRC error", DataFormatError);
    const Bytes repaired = fuzz::withRepairedPngCrcs(png);
    CHECK_THROWS_WITH_AS(ImageDecoder::decode(testutil::asBytes(repaired), 1, "x"),
                         "x: corrupt PNG: Invalid IHDR data", DataFormatError);
  }
}
