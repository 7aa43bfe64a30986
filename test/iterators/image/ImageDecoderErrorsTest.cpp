#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include "TempDir.h"
#include "TestPaths.h"
#include "iterators/FifoTestUtil.h"
#include "iterators/image/ImageDecoder.h"
#include "iterators/image/ImageTestUtil.h"
#include "iterators/image/ImageWriter.h"
#include "iterators/image/JpegTestFiles.h"
#include "iterators/image/PngTestFiles.h"
#include "nn/core/AtomicFile.h"
#include "nn/core/Error.h"

using namespace dl4cpp;
using testutil::Bytes;

namespace {

constexpr const char* kName = "photos/cat.img";

// The message of the E that decoding `file` throws (a failed check for anything else).
template <class E>
std::string errorOf(const Bytes& file, int channels = 3, DecodeSizeHint hint = {}) {
  try {
    (void)ImageDecoder::decode(testutil::asBytes(file), channels, kName, hint);
    FAIL_CHECK("decoded without an error");
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL_CHECK("wrong exception type: " << e.what());
  }
  return "";
}

Bytes bytesOf(const std::vector<std::byte>& bytes) {
  const auto* begin = reinterpret_cast<const uint8_t*>(bytes.data());
  return {begin, begin + bytes.size()};
}

Bytes pngFixture() { return bytesOf(ImageWriter::encodePng(testutil::patternImage(3, 16, 16, 8))); }
Bytes jpegFixture() { return bytesOf(ImageWriter::encodeJpeg(testutil::smoothImage(3, 64, 64))); }

// The offset of the first marker FF `code` after the start of the file.
size_t markerOffset(const Bytes& jpeg, uint8_t code) {
  for (size_t i = 2; i + 1 < jpeg.size(); ++i)
    if (jpeg[i] == 0xff && jpeg[i + 1] == code) return i;
  FAIL("no marker ff " << static_cast<int>(code));
  return 0;
}

void putU16(Bytes& bytes, size_t at, unsigned v) {
  bytes[at] = static_cast<uint8_t>(v >> 8);
  bytes[at + 1] = static_cast<uint8_t>(v);
}

// What `run` writes to file descriptor 2 (stderr), which is sent to a temporary file meanwhile.
template <class F>
std::string stderrOf(F run) {
  FILE* capture = std::tmpfile();
  REQUIRE(capture != nullptr);
  (void)std::fflush(stderr);
  const int saved = ::dup(2);
  ::dup2(::fileno(capture), 2);
  run();
  (void)std::fflush(stderr);
  ::dup2(saved, 2);
  ::close(saved);
  std::rewind(capture);
  std::string text;
  for (int c = std::fgetc(capture); c != EOF; c = std::fgetc(capture)) text += static_cast<char>(c);
  (void)std::fclose(capture);
  return text;
}

}  // namespace

TEST_SUITE("iterators.image") {
  TEST_CASE("ImageDecoder: channels other than 1, 3, 4 and negative size hints are ConfigErrors") {
    const Bytes png = pngFixture();
    for (const int channels : {0, 2, 5})
      CHECK_THROWS_WITH_AS(ImageDecoder::decode(testutil::asBytes(png), channels, kName),
                           doctest::Contains("channels must be 1 (grey), 3 (RGB) or 4 (RGBA)"),
                           ConfigError);
    CHECK_THROWS_AS(ImageDecoder::decode(testutil::asBytes(png), 3, kName, {-1, 5}), ConfigError);
  }

  TEST_CASE("ImageDecoder: an empty file and files cut off anywhere are DataTruncatedErrors") {
    CHECK(errorOf<DataTruncatedError>({}) ==
          std::string(kName) + ": empty file (0 bytes), not a PNG or JPEG image");
    const Bytes png = pngFixture();
    // Inside the signature, after it, inside IHDR, after it, inside the image data, before IEND,
    // inside IEND's CRC.
    for (const size_t cut : {size_t{1}, size_t{4}, size_t{7}, size_t{8}, size_t{20}, size_t{33},
                             size_t{60}, png.size() / 2, png.size() - 12, png.size() - 1}) {
      CAPTURE(cut);
      const std::string message =
          errorOf<DataTruncatedError>(Bytes(png.begin(), png.begin() + cut));
      CHECK(message.find(kName) == 0);
      CHECK(message.find("truncated") != std::string::npos);
    }
    const Bytes jpeg = jpegFixture();
    // Inside the signature, right after it, in the tables, in the image data, without the end
    // marker, inside it.
    for (const size_t cut : {size_t{1}, size_t{2}, size_t{3}, size_t{20}, size_t{200},
                             jpeg.size() / 2, jpeg.size() - 2, jpeg.size() - 1}) {
      CAPTURE(cut);
      for (const int channels : {1, 3}) {
        const std::string message =
            errorOf<DataTruncatedError>(Bytes(jpeg.begin(), jpeg.begin() + cut), channels);
        CHECK(message.find(kName) == 0);
        CHECK(message.find("truncated") != std::string::npos);
      }
    }
  }

  TEST_CASE(
      "ImageDecoder: other formats and non-images are DataFormatErrors saying what they are") {
    struct Case {
      Bytes bytes;
      const char* looksLike;
    };
    const Case cases[] = {
        {{'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0x80, 0, 0}, "a GIF image"},
        {{'B', 'M', 0x3a, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0}, "a BMP image"},
        {{'R', 'I', 'F', 'F', 0x24, 0, 0, 0, 'W', 'E', 'B', 'P', 'V', 'P', '8', ' '},
         "a WebP image"},
        {{'I', 'I', '*', 0, 8, 0, 0, 0}, "a TIFF image"},
        {{'M', 'M', 0, '*', 0, 0, 0, 8}, "a TIFF image"},
        {{0, 0, 1, 0, 1, 0, 16, 16, 0, 0}, "a Windows ICO icon"},  // favicons named .png
        {{0x1f, 0x8b, 8, 0, 0, 0, 0, 0}, "gzip data"},
        {{'l', 'a', 'b', 'e', 'l', ',', 'x', '\n', 'c', 'a', 't', ',', '1', '\n'}, "text"},
        {{'B', 'M', 'W', ' ', 'c', 'a', 'r', '\n'}, "text"},
        {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, "unrecognised data (first bytes 00 01 02 03 04 05 06 07)"},
        {{0x89, 'P', 'N', 'G', 0, 0, 0, 0, 0},
         "unrecognised data (first bytes 89 50 4e 47 00 00 00 00)"},
    };
    for (const Case& c : cases) {
      CAPTURE(c.looksLike);
      CHECK(errorOf<DataFormatError>(c.bytes) ==
            std::string(kName) + ": not a PNG or JPEG image: the data looks like " + c.looksLike);
    }
  }

  TEST_CASE(
      "ImageDecoder: corrupt PNG headers and data are DataFormatErrors with libpng's reason") {
    Bytes badCrc = pngFixture();
    badCrc[29] ^= 0xff;  // IHDR's CRC
    CHECK(errorOf<DataFormatError>(badCrc) ==
          std::string(kName) + ": corrupt PNG: IHDR: CRC error");

    Bytes badDepth =
        testutil::pngFile({4, 4, 3, 0}, {{0}, {0}, {0}, {0}});  // 3 bits: no such depth
    CHECK(errorOf<DataFormatError>(badDepth).find(": corrupt PNG: ") != std::string::npos);

    // An IDAT whose data is not zlib, with a valid CRC.
    Bytes notZlib = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    testutil::append(notZlib, testutil::ihdr({4, 4, 8, 0}));
    testutil::append(notZlib, testutil::pngChunk("IDAT", Bytes(40, 0xab)));
    testutil::append(notZlib, testutil::pngChunk("IEND", {}));
    CHECK(errorOf<DataFormatError>(notZlib).find(": corrupt PNG: ") != std::string::npos);

    // A complete zlib stream that holds 2 of the 4 rows, then IEND: no pixel may be made up.
    const Bytes shortStream = testutil::pngFile({4, 4, 8, 0}, {{1, 2, 3, 4}, {5, 6, 7, 8}});
    CHECK(errorOf<DataFormatError>(shortStream).find(": corrupt PNG: ") != std::string::npos);
  }

  TEST_CASE("ImageDecoder: dimensions over the limits are DataFormatErrors before any allocation") {
    for (const auto& [width, height] : {std::pair<uint32_t, uint32_t>{100000, 1},
                                        {1, 70000},
                                        {10000, 10000},
                                        {0x7fffffff, 0x7fffffff}}) {
      CAPTURE(width);
      CAPTURE(height);
      // A valid header and one row: the decoder must not believe the header.
      const Bytes png = testutil::pngFile({width, height, 8, 6}, {{0, 0, 0, 0}});
      const std::string message = errorOf<DataFormatError>(png);
      CHECK(message.find(kName) == 0);
      CHECK(message.find("over the limit of 65535 pixels a side and 33554432 in all") !=
            std::string::npos);
    }
    CHECK(errorOf<DataFormatError>(testutil::pngFile({0, 5, 8, 0}, {})).find("corrupt PNG") !=
          std::string::npos);  // libpng: "Image width is zero in IHDR"

    Bytes jpeg = jpegFixture();
    const size_t sof = markerOffset(jpeg, 0xc0);
    putU16(jpeg, sof + 5, 65000);  // height
    putU16(jpeg, sof + 7, 65000);  // width
    for (const int channels : {1, 3})
      CHECK(errorOf<DataFormatError>(jpeg, channels) ==
            std::string(kName) +
                ": the JPEG header claims 65000 x 65000 pixels, over the limit of 65535 pixels a "
                "side and 33554432 in all");
  }

  TEST_CASE("ImageDecoder: a 214-byte arithmetic-coded JPEG of 1040 x 63119 pixels is refused") {
    // Found by the fuzzer: arithmetic coding lets an encoder drop trailing zero data, so the file
    // is valid, and at the former limit of 2^26 pixels it decoded in 1.4 s to 1.2 GB of floats.
    const std::vector<std::byte> file =
        readWholeFile(testutil::testDataDir() /
                      "image-decoder-corpus/found-timeout-arithmetic-jpeg-1040x63119.jpg");
    REQUIRE(file.size() == 214);
    for (const int channels : {1, 3, 4})
      CHECK_THROWS_WITH_AS(ImageDecoder::decode(file, channels, kName),
                           doctest::Contains("the JPEG header claims 1040 x 63119 pixels, over the "
                                             "limit of 65535 pixels a side and 33554432 in all"),
                           DataFormatError);
  }

  TEST_CASE(
      "ImageDecoder::readHeader states the format and size from the header alone, with decode's "
      "errors for the bytes up to its end") {
    auto header = [](const Bytes& file) {
      return ImageDecoder::readHeader(testutil::asBytes(file), kName);
    };
    const ImageHeader png = header(pngFixture());
    CHECK(png.format == ImageFormat::Png);
    CHECK(png.height == 16);
    CHECK(png.width == 16);
    const ImageHeader jpeg = header(jpegFixture());
    CHECK(jpeg.format == ImageFormat::Jpeg);
    CHECK(jpeg.height == 64);
    CHECK(jpeg.width == 64);

    // Images decode refuses, or cannot decode: their headers are read all the same.
    const ImageHeader claimed = header(testutil::pngFile({10000, 20000, 8, 0}, {{0}}));
    CHECK(claimed.height == 20000);
    CHECK(claimed.width == 10000);
    Bytes tall = jpegFixture();
    putU16(tall, markerOffset(tall, 0xc0) + 5, 65000);
    CHECK(header(tall).height == 65000);
    const Bytes good = pngFixture();
    CHECK(header(Bytes(good.begin(), good.begin() + 45)).width == 16);  // IHDR whole, data cut

    CHECK_THROWS_WITH_AS(
        header({}),
        (std::string(kName) + ": empty file (0 bytes), not a PNG or JPEG image").c_str(),
        DataTruncatedError);
    CHECK_THROWS_WITH_AS(header(Bytes(good.begin(), good.begin() + 20)),
                         doctest::Contains("truncated PNG"), DataTruncatedError);
    CHECK_THROWS_WITH_AS(
        header({'G', 'I', 'F', '8', '9', 'a', 1, 0, 1, 0, 0x80, 0, 0}),
        doctest::Contains("not a PNG or JPEG image: the data looks like a GIF image"),
        DataFormatError);
    Bytes badCrc = good;
    badCrc[29] ^= 0xff;  // IHDR's CRC
    CHECK_THROWS_WITH_AS(header(badCrc),
                         (std::string(kName) + ": corrupt PNG: IHDR: CRC error").c_str(),
                         DataFormatError);
    const Bytes jpegBytes = jpegFixture();
    CHECK_THROWS_WITH_AS(header(Bytes(jpegBytes.begin(), jpegBytes.begin() + 20)),
                         doctest::Contains("truncated JPEG"), DataTruncatedError);
  }

  TEST_CASE(
      "ImageDecoder: corrupt and unsupported JPEGs are DataFormatErrors with libjpeg's reason") {
    const Bytes good = jpegFixture();
    const size_t sos = markerOffset(good, 0xda);
    const size_t scan = sos + 2 + (good[sos + 2] << 8 | good[sos + 3]);  // the entropy-coded data
    // A marker in the middle of the scan: the decoder runs out of data before the last block.
    Bytes cutScan = good;
    cutScan[scan + (good.size() - scan) / 2] = 0xff;
    cutScan[scan + (good.size() - scan) / 2 + 1] = 0xd9;
    for (const int channels : {1, 3}) {
      const std::string message = errorOf<DataFormatError>(cutScan, channels);
      CHECK(message.find(std::string(kName) + ": JPEG cannot be decoded: Corrupt JPEG data") == 0);
    }

    Bytes twelveBit = good;
    twelveBit[markerOffset(good, 0xc0) + 4] = 12;
    CHECK(errorOf<DataFormatError>(twelveBit) ==
          std::string(kName) + ": JPEG cannot be decoded: Unsupported JPEG data precision 12");

    Bytes lossless = good;
    lossless[markerOffset(good, 0xc0) + 1] = 0xc3;
    CHECK(errorOf<DataFormatError>(lossless).find("Unsupported JPEG process: SOF type 0xc3") !=
          std::string::npos);
  }

  TEST_CASE("ImageDecoder: a progressive JPEG of more than 500 scans is refused, not decoded") {
    // One grey component, DC and each AC coefficient sent a bit at a time: 64 x 11 = 704 scans,
    // a valid progression.
    std::vector<jpeg_scan_info> scans;
    for (int k = 0; k < 64; ++k)
      for (int bit = 10; bit >= 0; --bit)
        scans.push_back({1, {0, 0, 0, 0}, k, k, bit == 10 ? 0 : bit + 1, bit});
    testutil::JpegOptions options;
    options.input = JCS_GRAYSCALE;
    options.stored = JCS_GRAYSCALE;
    options.scans = scans;
    const Image grey = testutil::smoothImage(1, 8, 8);
    const Bytes file = testutil::jpegFile(testutil::interleaved(grey), 8, 8, 1, options);
    CHECK(errorOf<DataFormatError>(file, 1) ==
          std::string(kName) +
              ": JPEG cannot be decoded: more than 500 scans in a progressive JPEG");
  }

  TEST_CASE("ImageDecoder: warnings do not fail a good image, and nothing is printed") {
    // A bad ICC profile, an sRGB chunk with an unknown rendering intent and a text chunk with a
    // bad CRC: libpng warns about each and ignores it.
    Bytes badText = testutil::pngChunk("tEXt", {'a', 0, 'b'});
    badText.back() ^= 0xff;
    const Bytes png =
        testutil::pngFile({2, 1, 8, 0}, {{7, 9}},
                          {testutil::pngChunk("iCCP", {'x', 0, 0, 0x78, 0x9c, 3, 0, 0, 0, 0, 1}),
                           testutil::pngChunk("sRGB", {9}), badText});
    std::string printed = stderrOf([&] {
      CHECK(ImageDecoder::decode(testutil::asBytes(png), 1, kName).pixels ==
            std::vector<float>{7, 9});
    });
    CHECK(printed.empty());

    // Extraneous bytes before a JPEG marker: libjpeg skips them with a warning.
    const Bytes good = jpegFixture();
    Bytes extraneous = good;
    const size_t dqt = markerOffset(good, 0xdb);
    extraneous.insert(extraneous.begin() + static_cast<std::ptrdiff_t>(dqt), {1, 2, 3});
    printed = stderrOf([&] {
      CHECK(ImageDecoder::decode(testutil::asBytes(extraneous), 3, kName).pixels ==
            ImageDecoder::decode(testutil::asBytes(good), 3, kName).pixels);
    });
    CHECK(printed.empty());
  }

  TEST_CASE("ImageDecoder::decodeFile reads regular files only, naming the path in every error") {
    testutil::TempDir dir;
    const Image image = testutil::patternImage(3, 4, 5, 8);
    ImageWriter::writePng(image, dir / "cat.png");
    CHECK(ImageDecoder::decodeFile(dir / "cat.png", 3).pixels == image.pixels);
    // A PNG named .jpg is still a PNG: the bytes decide.
    ImageWriter::writePng(image, dir / "cat.jpg");
    CHECK(ImageDecoder::decodeFile(dir / "cat.jpg", 3).pixels == image.pixels);

    std::filesystem::create_directory(dir / "folder.png");
    CHECK_THROWS_WITH_AS(
        ImageDecoder::decodeFile(dir / "folder.png", 3),
        doctest::Contains(
            ((dir / "folder.png").string() + ": is a directory, not a PNG or JPEG image").c_str()),
        DataFormatError);
    CHECK_THROWS_WITH_AS(ImageDecoder::decodeFile(dir / "missing.png", 3),
                         doctest::Contains((dir / "missing.png").c_str()), DataNotFoundError);
    const std::string fifo = testutil::errorOnFifo<DataFormatError>(
        dir / "fifo.png", [&] { ImageDecoder::decodeFile(dir / "fifo.png", 3); });
    CHECK(fifo.find("is a FIFO") != std::string::npos);

    std::ofstream(dir / "notes.png") << "not an image\n";
    CHECK_THROWS_WITH_AS(ImageDecoder::decodeFile(dir / "notes.png", 3),
                         doctest::Contains(((dir / "notes.png").string() +
                                            ": not a PNG or JPEG image: the data looks like text")
                                               .c_str()),
                         DataFormatError);
    std::ofstream(dir / "empty.jpg").flush();
    CHECK_THROWS_WITH_AS(ImageDecoder::decodeFile(dir / "empty.jpg", 3),
                         doctest::Contains(((dir / "empty.jpg").string() + ": empty file").c_str()),
                         DataTruncatedError);
  }
}
