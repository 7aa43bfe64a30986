#include <doctest/doctest.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "iterators/FifoTestUtil.h"
#include "iterators/IdxReader.h"
#include "nn/core/Error.h"

using namespace dl4cpp;
namespace fs = std::filesystem;

namespace {

// A fresh directory under the system temp dir, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() / ("dl4cpp-idxreader-test-" + std::to_string(::getpid()) +
                                         "-" + std::to_string(counter++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

void putBe32(std::vector<uint8_t>& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(v >> shift));
}

std::vector<uint8_t> imageFile(uint32_t count, uint32_t rows, uint32_t cols,
                               const std::vector<uint8_t>& pixels) {
  std::vector<uint8_t> out;
  putBe32(out, IdxReader::kImagesMagic);
  putBe32(out, count);
  putBe32(out, rows);
  putBe32(out, cols);
  out.insert(out.end(), pixels.begin(), pixels.end());
  return out;
}

std::vector<uint8_t> labelFile(const std::vector<uint8_t>& labels) {
  std::vector<uint8_t> out;
  putBe32(out, IdxReader::kLabelsMagic);
  putBe32(out, static_cast<uint32_t>(labels.size()));
  out.insert(out.end(), labels.begin(), labels.end());
  return out;
}

void writeRaw(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  REQUIRE(out.good());
}

void writeGz(const std::string& path, const std::vector<uint8_t>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  if (!bytes.empty())
    REQUIRE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) ==
            static_cast<int>(bytes.size()));
  REQUIRE(gzclose(f) == Z_OK);
}

std::vector<uint8_t> readAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs f, expecting exception E; returns its message (fails the test on anything else).
template <class E, class F>
std::string thrownMessage(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL("threw the wrong exception type: " << std::string(e.what()));
  }
  FAIL("did not throw");
  return {};
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Deterministic pseudo-random bytes (incompressible enough to make gzip output long).
std::vector<uint8_t> noise(size_t n) {
  std::vector<uint8_t> v(n);
  uint32_t x = 2463534242u;
  for (auto& b : v) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = static_cast<uint8_t>(x);
  }
  return v;
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("IdxReader: reads a raw image file") {
    TempDir dir;
    const std::vector<uint8_t> pixels = {0, 1, 2, 3, 4, 5, 250, 251, 252, 253, 254, 255};
    writeRaw(dir.file("img"), imageFile(2, 2, 3, pixels));
    const IdxImages img = IdxReader::readImages(dir.file("img"));
    CHECK(img.count == 2);
    CHECK(img.rows == 2);
    CHECK(img.cols == 3);
    CHECK(img.imageSize() == 6);
    CHECK(img.pixels == pixels);
    CHECK(img.image(1)[0] == 250);
    CHECK_FALSE(IdxReader::isGzip(dir.file("img")));
  }

  TEST_CASE("IdxReader: reads a raw label file") {
    TempDir dir;
    writeRaw(dir.file("lbl"), labelFile({7, 2, 1, 0, 9}));
    const IdxLabels lbl = IdxReader::readLabels(dir.file("lbl"));
    CHECK(lbl.count() == 5);
    CHECK(lbl.labels == std::vector<uint8_t>{7, 2, 1, 0, 9});
  }

  TEST_CASE("IdxReader: reads gzip files exactly like raw ones") {
    TempDir dir;
    const std::vector<uint8_t> pixels = noise(5 * 28 * 28);
    writeRaw(dir.file("img"), imageFile(5, 28, 28, pixels));
    writeGz(dir.file("img.gz"), imageFile(5, 28, 28, pixels));
    writeGz(dir.file("lbl.gz"), labelFile({3, 1, 4, 1, 5}));
    CHECK(IdxReader::isGzip(dir.file("img.gz")));
    const IdxImages raw = IdxReader::readImages(dir.file("img"));
    const IdxImages gz = IdxReader::readImages(dir.file("img.gz"));
    CHECK(gz.count == 5);
    CHECK(gz.rows == 28);
    CHECK(gz.cols == 28);
    CHECK(gz.pixels == raw.pixels);
    CHECK(IdxReader::readLabels(dir.file("lbl.gz")).labels == std::vector<uint8_t>{3, 1, 4, 1, 5});
  }

  TEST_CASE("IdxReader: gzip is recognised by content, not by name") {
    TempDir dir;
    writeGz(dir.file("images-without-suffix"), imageFile(1, 1, 2, {9, 8}));
    CHECK(IdxReader::readImages(dir.file("images-without-suffix")).pixels ==
          std::vector<uint8_t>{9, 8});
  }

  TEST_CASE("IdxReader: empty files (zero examples) are valid") {
    TempDir dir;
    writeRaw(dir.file("img"), imageFile(0, 28, 28, {}));
    writeRaw(dir.file("lbl"), labelFile({}));
    CHECK(IdxReader::readImages(dir.file("img")).count == 0);
    CHECK(IdxReader::readLabels(dir.file("lbl")).count() == 0);
  }

  TEST_CASE("IdxReader: corrupt magic names file, expected and actual magic") {
    TempDir dir;
    std::vector<uint8_t> bytes = imageFile(1, 2, 2, {1, 2, 3, 4});
    bytes[2] = 0x12;
    bytes[3] = 0x34;
    writeRaw(dir.file("bad-magic"), bytes);
    const std::string msg =
        thrownMessage<DataFormatError>([&] { IdxReader::readImages(dir.file("bad-magic")); });
    CHECK(contains(msg, dir.file("bad-magic")));
    CHECK(contains(msg, "0x00001234"));
    CHECK(contains(msg, "0x00000803"));
  }

  TEST_CASE("IdxReader: a label file read as images says the files look swapped") {
    TempDir dir;
    writeRaw(dir.file("lbl"), labelFile({1, 2}));
    writeRaw(dir.file("img"), imageFile(1, 1, 1, {0}));
    const std::string m1 =
        thrownMessage<DataFormatError>([&] { IdxReader::readImages(dir.file("lbl")); });
    CHECK(contains(m1, "0x00000801"));
    CHECK(contains(m1, "0x00000803"));
    CHECK(contains(m1, "swapped"));
    const std::string m2 =
        thrownMessage<DataFormatError>([&] { IdxReader::readLabels(dir.file("img")); });
    CHECK(contains(m2, "0x00000803"));
    CHECK(contains(m2, "0x00000801"));
  }

  TEST_CASE("IdxReader: truncated header names file and offset") {
    TempDir dir;
    std::vector<uint8_t> bytes = imageFile(1, 2, 2, {1, 2, 3, 4});
    bytes.resize(6);  // magic + 2 bytes of the count
    writeRaw(dir.file("short-header"), bytes);
    const std::string msg =
        thrownMessage<DataTruncatedError>([&] { IdxReader::readImages(dir.file("short-header")); });
    CHECK(contains(msg, dir.file("short-header")));
    CHECK(contains(msg, "byte offset 6"));
    CHECK(contains(msg, "expected 16 bytes"));

    writeRaw(dir.file("two-bytes"), {0, 0});
    const std::string m2 =
        thrownMessage<DataTruncatedError>([&] { IdxReader::readLabels(dir.file("two-bytes")); });
    CHECK(contains(m2, "byte offset 2"));
    CHECK(contains(m2, "magic"));

    writeRaw(dir.file("empty"), {});
    CHECK_THROWS_AS(IdxReader::readImages(dir.file("empty")), DataTruncatedError);
  }

  TEST_CASE("IdxReader: truncated data names file and offset") {
    TempDir dir;
    // 3 images of 2x2 need 16 + 12 = 28 bytes; only 5 pixel bytes are present (21 bytes).
    std::vector<uint8_t> bytes = imageFile(3, 2, 2, {1, 2, 3, 4, 5});
    writeRaw(dir.file("short-data"), bytes);
    const std::string msg =
        thrownMessage<DataTruncatedError>([&] { IdxReader::readImages(dir.file("short-data")); });
    CHECK(contains(msg, dir.file("short-data")));
    CHECK(contains(msg, "byte offset 21"));
    CHECK(contains(msg, "expected 28 bytes"));
    CHECK(contains(msg, "7 missing"));

    writeRaw(dir.file("short-labels"), {0, 0, 8, 1, 0, 0, 0, 4, 1, 2});  // 4 announced, 2 present
    const std::string m2 =
        thrownMessage<DataTruncatedError>([&] { IdxReader::readLabels(dir.file("short-labels")); });
    CHECK(contains(m2, "byte offset 10"));
    CHECK(contains(m2, "expected 12 bytes"));
  }

  TEST_CASE("IdxReader: truncated data in a gzip file gives the decompressed offset") {
    TempDir dir;
    writeGz(dir.file("short-data.gz"), imageFile(3, 2, 2, {1, 2, 3, 4, 5}));
    const std::string msg = thrownMessage<DataTruncatedError>(
        [&] { IdxReader::readImages(dir.file("short-data.gz")); });
    CHECK(contains(msg, dir.file("short-data.gz")));
    CHECK(contains(msg, "byte offset 21 of the decompressed gzip stream"));
    CHECK(contains(msg, "expected 28 bytes"));
  }

  TEST_CASE("IdxReader: a gzip file cut short is reported as truncated") {
    TempDir dir;
    writeGz(dir.file("full.gz"), imageFile(20, 28, 28, noise(20 * 28 * 28)));
    std::vector<uint8_t> gz = readAll(dir.file("full.gz"));
    REQUIRE(gz.size() > 1000);
    gz.resize(gz.size() / 2);
    writeRaw(dir.file("cut.gz"), gz);
    const std::string msg =
        thrownMessage<DataTruncatedError>([&] { IdxReader::readImages(dir.file("cut.gz")); });
    CHECK(contains(msg, dir.file("cut.gz")));
    CHECK(contains(msg, "ends at byte " + std::to_string(gz.size()) + " of the file"));
    CHECK(contains(msg, "cut short"));
  }

  TEST_CASE(
      "IdxReader: a gzip file whose trailer is cut off is truncated, even when all data is there") {
    // Far more data than zlib's buffers hold: gzread() takes the end of the compressed input for
    // the end of the stream when the trailer is missing, so such files used to be accepted.
    TempDir dir;
    const std::vector<uint8_t> pixels = noise(1000 * 28 * 28);
    writeGz(dir.file("full.gz"), imageFile(1000, 28, 28, pixels));
    const std::vector<uint8_t> gz = readAll(dir.file("full.gz"));
    CHECK(IdxReader::readImages(dir.file("full.gz")).pixels == pixels);
    for (const size_t cut : {size_t{8}, size_t{4}, size_t{1}}) {
      CAPTURE(cut);
      const std::vector<uint8_t> shorter(gz.begin(), gz.end() - static_cast<std::ptrdiff_t>(cut));
      writeRaw(dir.file("no-trailer.gz"), shorter);
      const std::string msg = thrownMessage<DataTruncatedError>(
          [&] { IdxReader::readImages(dir.file("no-trailer.gz")); });
      CHECK(contains(msg, dir.file("no-trailer.gz")));
      CHECK(contains(msg, "at byte " + std::to_string(shorter.size()) + " of the file"));
      CHECK(contains(msg, "trailer"));
    }
    // A flipped byte in the deflate data: without the trailer nothing could tell the pixels
    // differ; with it, the CRC-32 does.
    std::vector<uint8_t> flipped = gz;
    flipped[gz.size() / 2] ^= 0x01;
    writeRaw(dir.file("flipped.gz"), flipped);
    const std::string crc =
        thrownMessage<DataFormatError>([&] { IdxReader::readImages(dir.file("flipped.gz")); });
    CHECK(contains(crc, dir.file("flipped.gz")));
    CHECK(contains(crc, "corrupt gzip data near byte"));
    flipped.resize(flipped.size() - 8);
    writeRaw(dir.file("flipped-no-trailer.gz"), flipped);
    CHECK_THROWS_AS(IdxReader::readImages(dir.file("flipped-no-trailer.gz")), DataTruncatedError);

    std::vector<uint8_t> labels = noise(300000);
    for (uint8_t& label : labels) label %= 10;
    writeGz(dir.file("labels.gz"), labelFile(labels));
    std::vector<uint8_t> lgz = readAll(dir.file("labels.gz"));
    lgz.resize(lgz.size() - 8);
    writeRaw(dir.file("labels-no-trailer.gz"), lgz);
    CHECK_THROWS_AS(IdxReader::readLabels(dir.file("labels-no-trailer.gz")), DataTruncatedError);
  }

  TEST_CASE("IdxReader: gzip members in a row are one stream, trailing bytes are an error") {
    TempDir dir;
    const std::vector<uint8_t> bytes = imageFile(3, 2, 2, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    const std::vector<uint8_t> head(bytes.begin(), bytes.begin() + 20);
    const std::vector<uint8_t> tail(bytes.begin() + 20, bytes.end());
    writeGz(dir.file("a.gz"), head);
    writeGz(dir.file("b.gz"), tail);
    std::vector<uint8_t> two = readAll(dir.file("a.gz"));
    const std::vector<uint8_t> second = readAll(dir.file("b.gz"));
    two.insert(two.end(), second.begin(), second.end());
    writeRaw(dir.file("two-members.gz"), two);
    CHECK(IdxReader::readImages(dir.file("two-members.gz")).pixels ==
          std::vector<uint8_t>(bytes.begin() + 16, bytes.end()));

    // Every member is verified: a bad CRC-32 in the second one is found.
    std::vector<uint8_t> badSecond = two;
    badSecond[badSecond.size() - 8] ^= 0xff;
    writeRaw(dir.file("bad-second.gz"), badSecond);
    CHECK_THROWS_WITH_AS(IdxReader::readImages(dir.file("bad-second.gz")),
                         doctest::Contains("incorrect data check"), DataFormatError);

    writeGz(dir.file("whole.gz"), bytes);
    std::vector<uint8_t> garbage = readAll(dir.file("whole.gz"));
    const size_t end = garbage.size();
    garbage.insert(garbage.end(), {'j', 'u', 'n', 'k'});
    writeRaw(dir.file("trailing.gz"), garbage);
    const std::string msg =
        thrownMessage<DataFormatError>([&] { IdxReader::readImages(dir.file("trailing.gz")); });
    CHECK(contains(msg, dir.file("trailing.gz")));
    CHECK(contains(
        msg, "4 unexpected bytes after the end of the gzip data at byte " + std::to_string(end)));
  }

  TEST_CASE("IdxReader: a gzip bomb fails before allocating what its header claims") {
    // 64 MiB of zeros compress to about 64 KiB; the header claims 2^32-1 images (3.4 TB). The
    // file cannot hold more than 1032 times its size, so nothing is read or allocated.
    TempDir dir;
    std::vector<uint8_t> bomb = imageFile(0xffffffffu, 28, 28, {});
    bomb.resize(bomb.size() + (size_t{64} << 20));
    writeGz(dir.file("bomb.gz"), bomb);
    std::vector<uint8_t> labelBomb = labelFile({});
    labelBomb[4] = labelBomb[5] = labelBomb[6] = labelBomb[7] = 0xff;
    labelBomb.resize(labelBomb.size() + (size_t{64} << 20));
    writeGz(dir.file("label-bomb.gz"), labelBomb);
    bomb = {};
    labelBomb = {};

    rusage before{};
    REQUIRE(::getrusage(RUSAGE_SELF, &before) == 0);
    const std::string msg =
        thrownMessage<DataTruncatedError>([&] { IdxReader::readImages(dir.file("bomb.gz")); });
    CHECK(contains(msg, dir.file("bomb.gz")));
    CHECK(contains(msg, "announces 3367254359296 bytes"));
    CHECK(contains(msg, "decompresses to at most"));
    CHECK_THROWS_WITH_AS(IdxReader::readLabels(dir.file("label-bomb.gz")),
                         doctest::Contains("decompresses to at most"), DataTruncatedError);
    rusage after{};
    REQUIRE(::getrusage(RUSAGE_SELF, &after) == 0);
    CHECK(after.ru_maxrss - before.ru_maxrss < 16 * 1024);  // KiB: well below the 64 MiB present
  }

  TEST_CASE("IdxReader: a gzip file with a bad checksum is a format error") {
    TempDir dir;
    writeGz(dir.file("good.gz"), imageFile(2, 2, 2, {1, 2, 3, 4, 5, 6, 7, 8}));
    std::vector<uint8_t> gz = readAll(dir.file("good.gz"));
    gz[gz.size() - 8] ^= 0xff;  // first byte of the CRC-32 trailer
    writeRaw(dir.file("bad-crc.gz"), gz);
    const std::string msg =
        thrownMessage<DataFormatError>([&] { IdxReader::readImages(dir.file("bad-crc.gz")); });
    CHECK(contains(msg, dir.file("bad-crc.gz")));
    CHECK(contains(msg, "corrupt gzip"));
  }

  TEST_CASE("IdxReader: absurd header dimensions fail before allocating") {
    TempDir dir;
    writeRaw(dir.file("zero-rows"), imageFile(1, 0, 28, {}));
    CHECK_THROWS_AS(IdxReader::readImages(dir.file("zero-rows")), DataFormatError);
    writeRaw(dir.file("huge-side"), imageFile(1, 0xffffffffu, 0xffffffffu, {1, 2, 3}));
    const std::string msg =
        thrownMessage<DataFormatError>([&] { IdxReader::readImages(dir.file("huge-side")); });
    CHECK(contains(msg, "4294967295x4294967295"));

    // 2^32-1 images of 28x28 would be 3.4 TB: the raw file is measured first, the gzip stream is
    // read in bounded chunks; both end as truncation, not as an allocation failure.
    const std::vector<uint8_t> huge = imageFile(0xffffffffu, 28, 28, {1, 2, 3});
    writeRaw(dir.file("huge-count"), huge);
    writeGz(dir.file("huge-count.gz"), huge);
    const std::string m2 =
        thrownMessage<DataTruncatedError>([&] { IdxReader::readImages(dir.file("huge-count")); });
    CHECK(contains(m2, "byte offset 19"));
    CHECK(contains(m2, "expected 3367254359296 bytes"));
    CHECK_THROWS_AS(IdxReader::readImages(dir.file("huge-count.gz")), DataTruncatedError);
    writeRaw(dir.file("huge-labels"), {0, 0, 8, 1, 0xff, 0xff, 0xff, 0xff, 1});
    CHECK_THROWS_AS(IdxReader::readLabels(dir.file("huge-labels")), DataTruncatedError);
  }

  TEST_CASE("IdxReader: label out of range is a format error naming index and offset") {
    TempDir dir;
    writeRaw(dir.file("lbl"), labelFile({0, 9, 10, 3}));
    const std::string msg =
        thrownMessage<DataFormatError>([&] { IdxReader::readLabels(dir.file("lbl")); });
    CHECK(contains(msg, dir.file("lbl")));
    CHECK(contains(msg, "label 2"));
    CHECK(contains(msg, "byte offset 10"));
    CHECK(contains(msg, "is 10"));
    // With more classes (or the check disabled) the same file is fine.
    CHECK(IdxReader::readLabels(dir.file("lbl"), 11).count() == 4);
    CHECK(IdxReader::readLabels(dir.file("lbl"), 0).count() == 4);
  }

  TEST_CASE("IdxReader: missing file is DataNotFoundError with a hint") {
    TempDir dir;
    const std::string path = dir.file("no-such-file-idx3-ubyte");
    const std::string msg = thrownMessage<DataNotFoundError>([&] { IdxReader::readImages(path); });
    CHECK(contains(msg, path));
    CHECK(contains(msg, "scripts/get-mnist.sh"));
    CHECK(contains(msg, "apt-get install dataset-fashion-mnist"));
    CHECK_THROWS_AS(IdxReader::readLabels(path), DataNotFoundError);
    CHECK_FALSE(IdxReader::isGzip(path));
  }

  TEST_CASE("IdxReader: directories, FIFOs and devices are refused without blocking") {
    TempDir dir;
    fs::create_directories(dir.file("subdir"));
    CHECK_THROWS_WITH_AS(IdxReader::readImages(dir.file("subdir")),
                         doctest::Contains("is a directory, not an IDX file"), DataFormatError);
    CHECK(contains(testutil::errorOnFifo<DataFormatError>(
                       dir.file("fifo"), [&] { IdxReader::readImages(dir.file("fifo")); }),
                   "is a FIFO, not an IDX file"));
    bool gzip = true;
    CHECK(testutil::errorOnFifo<Error>(dir.file("fifo2"), [&] {
            gzip = IdxReader::isGzip(dir.file("fifo2"));
          }) == "no exception");
    CHECK_FALSE(gzip);
    CHECK_THROWS_WITH_AS(IdxReader::readLabels("/dev/zero"),
                         doctest::Contains("is a character device"), DataFormatError);
  }
}
