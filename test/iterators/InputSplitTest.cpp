// InputSplit::sample and FileSplit's DataVec forms: FileSplit(dir, allowedFormats[, seed]),
// FileSplit(path, seed).
#include <TempDir.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "iterators/FileSplit.h"
#include "iterators/image/LabeledFileSplit.h"
#include "iterators/image/NativeImageLoader.h"
#include "nn/core/Error.h"

using namespace dl4cpp;
namespace fs = std::filesystem;

namespace {

void touch(const fs::path& path) {
  fs::create_directories(path.parent_path());
  std::ofstream(path).put('x');
}

std::vector<fs::path> numbered(int n) {
  std::vector<fs::path> paths;
  for (int i = 0; i < n; ++i) paths.emplace_back("f" + std::to_string(i));
  return paths;
}

std::vector<size_t> sizes(const std::vector<InputSplit>& parts) {
  std::vector<size_t> result;
  for (const InputSplit& part : parts) result.push_back(part.locations().size());
  return result;
}

// Keeps every other path, reversed: a filter whose effect shows in the parts.
class EveryOther : public PathFilter {
 public:
  std::vector<fs::path> filter(const std::vector<fs::path>& paths) const override {
    std::vector<fs::path> kept;
    for (size_t i = 0; i < paths.size(); i += 2) kept.push_back(paths[i]);
    std::reverse(kept.begin(), kept.end());
    return kept;
  }
};

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("InputSplit::sample: parts in proportion to the weights, in order, covering all") {
    const InputSplit all(numbered(10));
    const std::vector<InputSplit> parts = all.sample(nullptr, 80, 20);
    REQUIRE(parts.size() == 2);
    CHECK(sizes(parts) == std::vector<size_t>{8, 2});
    CHECK(parts[0].locations() ==
          std::vector<fs::path>(all.locations().begin(), all.locations().begin() + 8));
    CHECK(parts[1].locations() ==
          std::vector<fs::path>(all.locations().begin() + 8, all.locations().end()));
    // Weights are proportions.
    CHECK(sizes(all.sample(nullptr, 0.8, 0.2)) == sizes(parts));
    CHECK(sizes(all.sample(nullptr, 4, 1)) == sizes(parts));
    // Cuts at round(n * cumulative / total), halves up as Java's Math.round: 7 paths at 50/50
    // cut at 3.5 -> 4.
    CHECK(sizes(InputSplit(numbered(7)).sample(nullptr, 50, 50)) == std::vector<size_t>{4, 3});
    CHECK(sizes(InputSplit(numbered(10)).sample(nullptr, 1, 1, 1)) == std::vector<size_t>{3, 4, 3});
    // No weight: one part with everything; a zero weight: an empty part.
    CHECK(sizes(all.sample(nullptr)) == std::vector<size_t>{10});
    CHECK(sizes(all.sample(nullptr, 1, 0, 1)) == std::vector<size_t>{5, 0, 5});
    // 1000 paths at 70/20/10.
    CHECK(sizes(InputSplit(numbered(1000)).sample(nullptr, 70, 20, 10)) ==
          std::vector<size_t>{700, 200, 100});
  }

  TEST_CASE("InputSplit::sample: the filter's result is what is cut") {
    const InputSplit all(numbered(10));
    const EveryOther filter;
    const std::vector<InputSplit> parts = all.sample(filter, 60, 40);
    CHECK(sizes(parts) == std::vector<size_t>{3, 2});
    CHECK(parts[0].locations() == std::vector<fs::path>{"f8", "f6", "f4"});
    CHECK(parts[1].locations() == std::vector<fs::path>{"f2", "f0"});
  }

  TEST_CASE("InputSplit::sample: a negative, infinite or all-zero weight is a ConfigError") {
    const InputSplit all(numbered(4));
    CHECK_THROWS_AS(all.sample(nullptr, 1, -1), ConfigError);
    CHECK_THROWS_AS(all.sample(nullptr, 1.0, std::numeric_limits<double>::infinity()), ConfigError);
    CHECK_THROWS_AS(all.sample(nullptr, 1.0, std::numeric_limits<double>::quiet_NaN()),
                    ConfigError);
    CHECK_THROWS_AS(all.sample(nullptr, 0, 0), ConfigError);
  }

  TEST_CASE(
      "FileSplit(dir, allowedFormats, seed): the image files, shuffled by the seed alone, as "
      "the image folder listing") {
    testutil::TempDir dir;
    for (const char* label : {"a", "b", "c"})
      for (int i = 0; i < 20; ++i) touch(dir / label / (std::to_string(i) + ".png"));
    touch(dir / "a/UPPER.JPG");
    touch(dir / "b/readme.txt");
    touch(dir / "c/.hidden.png");

    const FileSplit sorted(dir.path(), NativeImageLoader::ALLOWED_FORMATS);
    CHECK(sorted.length() == 61);
    CHECK(sorted.skippedFiles() == 2);
    CHECK(std::is_sorted(sorted.locations().begin(), sorted.locations().end()));
    CHECK(sorted.root() == dir.path());
    // The same files as LabeledFileSplit lists.
    const LabeledFileSplit listed(dir.path(), NativeImageLoader::ALLOWED_FORMATS);
    REQUIRE(listed.files().size() == sorted.locations().size());
    for (size_t i = 0; i < listed.files().size(); ++i)
      CHECK(listed.files()[i].path == sorted.locations()[i]);
    CHECK(NativeImageLoader::ALLOWED_FORMATS == LabeledFileSplit::defaultImageExtensions());

    const FileSplit shuffled(dir.path(), NativeImageLoader::ALLOWED_FORMATS, 42);
    const FileSplit again(dir.path(), NativeImageLoader::ALLOWED_FORMATS, 42);
    const FileSplit other(dir.path(), NativeImageLoader::ALLOWED_FORMATS, 43);
    CHECK(shuffled.locations() == again.locations());
    CHECK(shuffled.locations() != sorted.locations());
    CHECK(shuffled.locations() != other.locations());
    const std::set<fs::path> a(shuffled.locations().begin(), shuffled.locations().end());
    const std::set<fs::path> b(sorted.locations().begin(), sorted.locations().end());
    CHECK(a == b);

    // Every file, shuffled (DataVec's FileSplit(dir, rng)).
    const FileSplit everything(dir.path(), uint64_t{42});
    CHECK(everything.length() == 63);
    CHECK(!std::is_sorted(everything.locations().begin(), everything.locations().end()));
  }

  TEST_CASE(
      "FileSplit(dir, allowedFormats): a missing folder, no accepted file, an empty class "
      "folder and no format are errors naming the path") {
    testutil::TempDir dir;
    CHECK_THROWS_AS(FileSplit(dir / "missing", NativeImageLoader::ALLOWED_FORMATS, 1),
                    DataNotFoundError);
    touch(dir / "only/notes.txt");
    try {
      FileSplit split(dir / "only", NativeImageLoader::ALLOWED_FORMATS);
      FAIL("expected DataNotFoundError");
    } catch (const DataNotFoundError& e) {
      CHECK(std::string(e.what()).find((dir / "only").string()) != std::string::npos);
    }
    touch(dir / "classes/cat/1.png");
    fs::create_directories(dir / "classes/dog");
    try {
      FileSplit split(dir / "classes", NativeImageLoader::ALLOWED_FORMATS, 7);
      FAIL("expected DataError");
    } catch (const DataError& e) {
      CHECK(std::string(e.what()).find((dir / "classes/dog").string()) != std::string::npos);
      CHECK(std::string(e.what()).find("empty class folder") != std::string::npos);
    }
    CHECK_THROWS_AS(FileSplit(dir / "classes/cat", std::vector<std::string>{}), ConfigError);
  }
}
