#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "TestPaths.h"
#include "fuzz/IdxReaderFuzzInput.h"

using namespace dl4cpp;

namespace {

const std::filesystem::path kCorpus = testutil::testDataDir() / "idx-reader-corpus";

std::vector<uint8_t> bytesOf(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("IdxReader: the committed fuzz corpus replays through the fuzz target's entry point") {
    int files = 0, seeds = 0;
    for (const auto& entry : std::filesystem::directory_iterator(kCorpus)) {
      const std::string name = entry.path().filename().string();
      CAPTURE(name);
      const std::vector<uint8_t> bytes = bytesOf(entry.path());
      int accepted = 0;
      CHECK_NOTHROW(accepted = fuzz::readIdxInput(bytes));  // only dl4cpp::Error may occur inside
      if (name.rfind("seed-", 0) == 0) {
        // A valid image or label file: read as given, and once more gzipped when it is raw.
        CHECK(accepted == (fuzz::isGzip(bytes) ? 1 : 2));
        ++seeds;
      } else if (name.rfind("reject-", 0) == 0) {
        CHECK(accepted == 0);  // each is made to fail one particular check of the reader
      }
      ++files;
    }
    CHECK(seeds >= 6);
    CHECK(files > seeds);
  }
}
