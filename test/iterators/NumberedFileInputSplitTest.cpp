#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "iterators/NumberedFileInputSplit.h"
#include "nn/core/Error.h"

using namespace dl4cpp;

namespace {

std::vector<std::string> paths(const InputSplit& split) {
  std::vector<std::string> out;
  for (const auto& p : split.locations()) out.push_back(p.string());
  return out;
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("NumberedFileInputSplit: one path per index, in numeric order") {
    using V = std::vector<std::string>;
    CHECK(paths(NumberedFileInputSplit("d/%d.csv", 8, 11)) ==
          V{"d/8.csv", "d/9.csv", "d/10.csv", "d/11.csv"});
    CHECK(paths(NumberedFileInputSplit("img_%03d.txt", 7, 7)) == V{"img_007.txt"});
    CHECK(paths(NumberedFileInputSplit("%02d", 99, 100)) == V{"99", "100"});
    CHECK(paths(NumberedFileInputSplit("100%%/%d_%%x", 0, 1)) == V{"100%/0_%x", "100%/1_%x"});
    const NumberedFileInputSplit split("a/%d", 3, 5);
    CHECK(split.length() == 3);
    CHECK(split.baseString() == "a/%d");
    CHECK(split.minIdx() == 3);
    CHECK(split.maxIdx() == 5);
  }

  TEST_CASE("NumberedFileInputSplit: a pattern or range that names no files is a ConfigError") {
    CHECK_THROWS_WITH_AS(NumberedFileInputSplit("data/file.csv", 0, 3),
                         doctest::Contains("'data/file.csv': no index pattern"), ConfigError);
    CHECK_THROWS_WITH_AS(NumberedFileInputSplit("%d/%d.csv", 0, 3),
                         doctest::Contains("more than one index pattern"), ConfigError);
    CHECK_THROWS_WITH_AS(NumberedFileInputSplit("%s.csv", 0, 3),
                         doctest::Contains("'%' at byte 1 starts no \"%d\" or \"%0Nd\""),
                         ConfigError);
    CHECK_THROWS_AS(NumberedFileInputSplit("x%", 0, 3), ConfigError);
    CHECK_THROWS_AS(NumberedFileInputSplit("x%0d", 0, 3), ConfigError);
    CHECK_THROWS_WITH_AS(NumberedFileInputSplit("%d", 4, 3),
                         doctest::Contains("[4, 3] is not 0 <= min <= max"), ConfigError);
    CHECK_THROWS_AS(NumberedFileInputSplit("%d", -1, 3), ConfigError);
    CHECK_THROWS_AS(NumberedFileInputSplit("%d", 0, int64_t{1} << 40), ConfigError);
  }
}
