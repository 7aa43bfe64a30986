#include <TempDir.h>
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "iterators/image/LabeledFileSplit.h"
#include "nn/core/Error.h"

using namespace dl4cpp;
namespace fs = std::filesystem;

namespace {

// Creates an empty file (the split reads only paths).
void touch(const fs::path& path) {
  fs::create_directories(path.parent_path());
  std::ofstream(path).put('x');
}

// root/<label>/<i>.png for each label with its count.
void makeClasses(const fs::path& root, const std::vector<std::pair<std::string, int>>& classes) {
  for (const auto& [label, count] : classes)
    for (int i = 0; i < count; ++i) touch(root / label / (std::to_string(i) + ".png"));
}

std::set<fs::path> paths(const LabeledFileSplit& split) {
  std::set<fs::path> result;
  for (const LabeledFile& f : split.files()) result.insert(f.path);
  return result;
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE(
      "LabeledFileSplit: labels are the sorted folder names, files sorted, other extensions "
      "skipped and counted") {
    testutil::TempDir dir;
    makeClasses(dir.path(), {{"Trouser", 2}, {"Bag", 3}, {"T-shirt_top", 1}});
    touch(dir / "Bag/notes.txt");
    touch(dir / "Bag/.hidden.png");
    touch(dir / "Trouser/UPPER.PNG");
    touch(dir / "Trouser/photo.JpEg");

    const LabeledFileSplit split(dir.path());
    CHECK(split.labels() == std::vector<std::string>{"Bag", "T-shirt_top", "Trouser"});
    CHECK(split.size() == 8);
    CHECK(split.skippedFiles() == 2);
    CHECK(split.countPerLabel() == std::vector<int64_t>{3, 1, 4});
    for (size_t i = 1; i < split.files().size(); ++i)
      CHECK(split.files()[i - 1].path < split.files()[i].path);
    for (const LabeledFile& f : split.files())
      CHECK(split.labels()[static_cast<size_t>(f.label)] == f.path.parent_path().filename());

    const LabeledFileSplit pngOnly(dir.path(), {".png"});
    CHECK(pngOnly.size() == 7);  // the extension match ignores case and a leading dot
  }

  TEST_CASE(
      "LabeledFileSplit: missing root, no image, an empty class folder and a label unknown to "
      "the training split are typed errors naming the path") {
    testutil::TempDir dir;
    CHECK_THROWS_AS(LabeledFileSplit(dir / "absent"), DataNotFoundError);

    touch(dir / "only/readme.txt");
    CHECK_THROWS_WITH_AS(LabeledFileSplit(dir.path()), doctest::Contains("holds no file"),
                         DataNotFoundError);

    makeClasses(dir.path(), {{"a", 2}});
    fs::create_directories(dir / "b");
    const std::string emptyFolder = (dir / "b").string() + "' holds no file";
    CHECK_THROWS_WITH_AS(LabeledFileSplit(dir.path()), doctest::Contains(emptyFolder.c_str()),
                         DataError);
    fs::remove_all(dir / "b");
    fs::remove_all(dir / "only");
    CHECK(LabeledFileSplit(dir.path()).size() == 2);

    makeClasses(dir.path(), {{"c", 1}});
    CHECK_THROWS_WITH_AS(LabeledFileSplit(dir.path(), {"a"}, {"png"}),
                         doctest::Contains("label 'c'"), DataError);
    const LabeledFileSplit known(dir.path(), {"c", "a", "z"}, {"png"});
    CHECK(known.labels() == std::vector<std::string>{"c", "a", "z"});
    CHECK(known.countPerLabel() == std::vector<int64_t>{1, 2, 0});
    CHECK_THROWS_AS(LabeledFileSplit(dir.path(), std::vector<std::string>{}), ConfigError);
  }

  TEST_CASE("LabeledFileSplit::splitEachLabel: disjoint parts with each label's fraction, seeded") {
    testutil::TempDir dir;
    makeClasses(dir.path(), {{"a", 10}, {"b", 5}, {"c", 20}});
    const LabeledFileSplit all(dir.path());

    const auto parts = all.splitEachLabel({0.8, 0.2}, 7);
    REQUIRE(parts.size() == 2);
    CHECK(parts[0].countPerLabel() == std::vector<int64_t>{8, 4, 16});
    CHECK(parts[1].countPerLabel() == std::vector<int64_t>{2, 1, 4});
    CHECK(parts[0].labels() == all.labels());
    CHECK(parts[1].labels() == all.labels());
    std::set<fs::path> union_ = paths(parts[0]);
    for (const fs::path& p : paths(parts[1])) CHECK(union_.insert(p).second);  // disjoint
    CHECK(union_ == paths(all));

    CHECK(paths(all.splitEachLabel({0.8, 0.2}, 7)[0]) == paths(parts[0]));
    CHECK(paths(all.splitEachLabel({0.8, 0.2}, 8)[0]) != paths(parts[0]));

    // Fractions summing to less than one leave the rest out.
    const auto half = all.splitEachLabel({0.5}, 1);
    CHECK(half[0].countPerLabel() == std::vector<int64_t>{5, 3, 10});
  }

  TEST_CASE(
      "LabeledFileSplit::splitEachLabel: bad fractions and a class only in the test part are "
      "errors") {
    testutil::TempDir dir;
    makeClasses(dir.path(), {{"a", 10}, {"rare", 1}});
    const LabeledFileSplit all(dir.path());
    CHECK_THROWS_AS(all.splitEachLabel({}, 1), ConfigError);
    CHECK_THROWS_AS(all.splitEachLabel({0.0, 0.5}, 1), ConfigError);
    CHECK_THROWS_AS(all.splitEachLabel({0.7, 0.7}, 1), ConfigError);
    CHECK_THROWS_WITH_AS(all.splitEachLabel({0.4, 0.6}, 1), doctest::Contains("class 'rare'"),
                         DataError);
    CHECK_NOTHROW(all.splitEachLabel({0.4}, 1));  // the rare class is left out of every part
  }

  TEST_CASE(
      "BalancedPathFilter: every label keeps the smallest label's count, or the cap, seeded") {
    testutil::TempDir dir;
    makeClasses(dir.path(), {{"a", 10}, {"b", 4}, {"c", 7}});
    const LabeledFileSplit all(dir.path());
    const LabeledFileSplit balanced = BalancedPathFilter(3).filter(all);
    CHECK(balanced.countPerLabel() == std::vector<int64_t>{4, 4, 4});
    CHECK(BalancedPathFilter(3, 2).filter(all).countPerLabel() == std::vector<int64_t>{2, 2, 2});
    CHECK(paths(BalancedPathFilter(3).filter(all)) == paths(balanced));
    CHECK(paths(BalancedPathFilter(4).filter(all)) != paths(balanced));
    for (const fs::path& p : paths(balanced)) CHECK(paths(all).count(p) == 1);
    CHECK_THROWS_AS(BalancedPathFilter(1, -1), ConfigError);
  }

  TEST_CASE(
      "LabeledFileSplit: FIFOs and dangling links named .png are skipped and counted, links "
      "followed") {
    testutil::TempDir dir;
    makeClasses(dir / "data", {{"a", 2}, {"b", 1}});
    REQUIRE(::mkfifo((dir / "data/a/fifo.png").c_str(), 0600) == 0);
    fs::create_symlink("gone.png", dir / "data/a/dangling.png");
    // A link to a file is that file; a link to a folder elsewhere is a class folder.
    makeClasses(dir / "elsewhere", {{"c", 3}});
    fs::create_symlink("../a/0.png", dir / "data/b/linked.png");
    fs::create_directory_symlink(dir / "elsewhere/c", dir / "data/c");
    const LabeledFileSplit split(dir / "data");
    CHECK(split.labels() == std::vector<std::string>{"a", "b", "c"});
    CHECK(split.countPerLabel() == std::vector<int64_t>{2, 2, 3});
    CHECK(split.skippedFiles() == 2);
  }

  TEST_CASE("LabeledFileSplit: a symbolic link loop is reported as one, naming the link") {
    testutil::TempDir dir;
    makeClasses(dir.path(), {{"a", 2}, {"b", 1}});
    fs::create_symlink("loop.png", dir / "b/loop.png");
    CHECK_THROWS_WITH_AS(
        LabeledFileSplit(dir.path()),
        ("LabeledFileSplit: '" + (dir / "b/loop.png").string() + "' is a loop of symbolic links")
            .c_str(),
        DataError);

    // A link to a folder that contains it would be walked for ever.
    testutil::TempDir tree;
    makeClasses(tree.path(), {{"a", 2}});
    fs::create_directory_symlink("..", tree / "a/up");
    CHECK_THROWS_WITH_AS(
        LabeledFileSplit(tree.path()),
        doctest::Contains(("'" + (tree / "a/up").string() +
                           "' is a loop of symbolic links: it leads to '" +
                           fs::canonical(tree.path()).string() + "', a folder it is in")
                              .c_str()),
        DataError);
    // The root itself.
    testutil::TempDir rootLoop;
    fs::create_symlink("self", rootLoop / "self");
    CHECK_THROWS_WITH_AS(LabeledFileSplit(rootLoop / "self"),
                         doctest::Contains("is a loop of symbolic links"), DataError);
  }
}
