// The samples' command line: output paths are checked when it is parsed, before any work.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "SampleSupport.h"
#include "TempDir.h"
#include "nn/core/Error.h"

namespace {

// Parses `args` as a sample with every output flag would.
samples::SampleOptions parse(std::vector<std::string> args) {
  args.insert(args.begin(), "sample");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return samples::SampleOptions(
      static_cast<int>(argv.size()), argv.data(),
      {{"save", ""}, {"report", ""}, {"json", ""}, {"out", ""}, {"epochs", ""}});
}

}  // namespace

TEST_SUITE("samples") {
  TEST_CASE("SampleOptions: output paths that cannot be written fail when parsed") {
    testutil::TempDir dir;
    CHECK_THROWS_WITH_AS(parse({"--report", "/nonexistent/x.html"}),
                         "cannot write the HTML report (--report) to /nonexistent/x.html: the "
                         "folder /nonexistent does not exist",
                         dl4cpp::OutputPathError);
    CHECK_THROWS_WITH_AS(parse({"--save", "/dev/null"}),
                         "cannot write the model file (--save) to /dev/null: it is a character "
                         "device; only a regular file is written or replaced",
                         dl4cpp::OutputPathError);
    CHECK_THROWS_WITH_AS(parse({"--save", dir.path().string()}), doctest::Contains("a directory"),
                         dl4cpp::OutputPathError);
    REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
    CHECK_THROWS_WITH_AS(parse({"--json", (dir / "fifo").string()}),
                         doctest::Contains("the JSON results (--json)"), dl4cpp::OutputPathError);
    CHECK_THROWS_WITH_AS(parse({"--out", (dir / "fifo").string()}),
                         doctest::Contains("the output folder (--out)"), dl4cpp::OutputPathError);
    // Paths that can be written pass, and nothing is created by checking them.
    const samples::SampleOptions fine =
        parse({"--save", (dir / "m.dl4cpp").string(), "--report", (dir / "r.html").string(),
               "--out", (dir / "new" / "folder").string(), "--epochs", "3"});
    CHECK(fine.getInt("epochs", 0) == 3);
    CHECK_FALSE(std::filesystem::exists(dir / "m.dl4cpp"));
    CHECK_FALSE(std::filesystem::exists(dir / "new"));
  }
}
