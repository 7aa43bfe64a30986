// Hostile model paths and files: what is not a regular file, files far larger than a model, and a
// configuration nested deeply enough to overflow any recursion. Each is a typed error, found
// before the file is read whole.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "TempDir.h"
#include "nn/core/AtomicFile.h"
#include "nn/core/Error.h"
#include "nn/util/ModelFileTestUtil.h"

using namespace dl4cpp;
using namespace testutil;

namespace {

// 1 TiB: sparse on disk, but more than this machine could read into memory.
constexpr off_t kTiB = off_t{1} << 40;

void writeBytes(const std::filesystem::path& path, const std::vector<std::byte>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::byte> smallModelFile() {
  MultiLayerNetwork net(smallConvNet(Sgd(0.1)));
  net.init();
  return ModelSerializer::toBytes(net, false);
}

}  // namespace

TEST_SUITE("nn.util.ModelSerializer") {
  TEST_CASE("a model path that is a FIFO, a directory or a device is refused at once") {
    TempDir dir;
    REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
    const auto start = std::chrono::steady_clock::now();
    // Opening a FIFO without a writer blocked for ever.
    CHECK_THROWS_WITH_AS(MultiLayerNetwork::load(dir / "fifo"),
                         doctest::Contains("is a FIFO, not a dl4cpp model file"), DataFormatError);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    // /dev/zero never ends: it was read until std::bad_alloc.
    CHECK_THROWS_WITH_AS(ModelSerializer::restoreMultiLayerNetwork("/dev/zero"),
                         doctest::Contains("/dev/zero: is a character device"), DataFormatError);
    CHECK_THROWS_WITH_AS(MultiLayerNetwork::load(dir.path()), doctest::Contains("is a directory"),
                         DataFormatError);
  }

  TEST_CASE("a file far larger than memory is rejected by its first bytes, not read whole") {
    TempDir dir;
    // Not a model: the magic number decides, after 8 bytes.
    const auto foreign = dir / "archive.zip";
    writeBytes(foreign, {std::byte{'P'}, std::byte{'K'}, std::byte{3}, std::byte{4}});
    REQUIRE(::truncate(foreign.c_str(), kTiB) == 0);
    CHECK_THROWS_WITH_AS(MultiLayerNetwork::load(foreign), doctest::Contains("bad magic number"),
                         DataFormatError);

    // A model's header and sections followed by a terabyte: the section headers account for a few
    // kilobytes, so the rest is refused before it is read.
    const auto padded = dir / "padded.dl4cpp";
    const std::vector<std::byte> model = smallModelFile();
    writeBytes(padded, model);
    REQUIRE(::truncate(padded.c_str(), kTiB) == 0);
    const std::string trailing = std::to_string(kTiB - static_cast<off_t>(model.size())) +
                                 " unexpected bytes after the last section";
    CHECK_THROWS_WITH_AS(MultiLayerNetwork::load(padded), doctest::Contains(trailing.c_str()),
                         DataFormatError);

    // A section declaring more bytes than the file has: the header says so before any payload.
    writeBytes(padded, std::vector<std::byte>(model.begin(), model.end() - 1));
    CHECK_THROWS_WITH_AS(MultiLayerNetwork::load(padded), doctest::Contains("truncated model file"),
                         DataTruncatedError);
  }

  TEST_CASE("a configuration nested 100,000 levels deep is a ConfigError through every loader") {
    // 200 KB of brackets as the value of "seed": the message for its wrong type recursed once per
    // level and overflowed the stack (exit 139).
    auto parts = testutil::parts(smallModelFile());
    std::string json(reinterpret_cast<const char*>(parts[0].second.data()), parts[0].second.size());
    const auto seed = json.find("\"seed\": 7");
    REQUIRE(seed != std::string::npos);
    json.replace(seed, 9, "\"seed\": " + std::string(100'000, '[') + std::string(100'000, ']'));
    parts[0].second.assign(reinterpret_cast<const std::byte*>(json.data()),
                           reinterpret_cast<const std::byte*>(json.data()) + json.size());
    const std::vector<std::byte> file = assemble(parts);

    CHECK_THROWS_WITH_AS(
        ModelSerializer::restoreFromBytes(file, true, "deep.dl4cpp"),
        doctest::Contains("deep.dl4cpp: configuration section: MultiLayerConfiguration::fromJson: "
                          "JSON nested more than 64 levels deep"),
        ConfigError);
    TempDir dir;
    writeBytes(dir / "deep.dl4cpp", file);
    CHECK_THROWS_WITH_AS(MultiLayerNetwork::load(dir / "deep.dl4cpp"),
                         doctest::Contains("nested more than 64"), ConfigError);
    CHECK_THROWS_WITH_AS(ModelSerializer::restoreMultiLayerNetwork(dir / "deep.dl4cpp", false),
                         doctest::Contains("nested more than 64"), ConfigError);
  }

  TEST_CASE("readWholeFile reads exactly a regular file and refuses the rest") {
    TempDir dir;
    const std::vector<std::byte> model = smallModelFile();
    writeBytes(dir / "m", model);
    CHECK(readWholeFile(dir / "m") == model);
    CHECK(readWholeFile(dir / "m", "a checkpoint").size() == model.size());
    CHECK_THROWS_WITH_AS(readWholeFile("/dev/zero", "a checkpoint"),
                         doctest::Contains("not a checkpoint"), DataFormatError);
    CHECK_THROWS_AS(readWholeFile(dir / "missing"), DataNotFoundError);
    // The file shrinks after it was opened: reported, not returned short.
    const RegularFile file(dir / "m", "a model");
    REQUIRE(::truncate((dir / "m").c_str(), 10) == 0);
    CHECK_THROWS_WITH_AS(readWholeFile(file, dir / "m"),
                         doctest::Contains("the file ends at offset 10"), DataTruncatedError);
  }

}  // TEST_SUITE
