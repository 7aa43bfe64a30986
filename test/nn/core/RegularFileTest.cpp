// RegularFile: the opener every reader of user-supplied paths goes through.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>

#include "TempDir.h"
#include "nn/core/Error.h"
#include "nn/core/RegularFile.h"

using namespace dl4cpp;

TEST_CASE("RegularFile opens a regular file and knows its size") {
  testutil::TempDir dir;
  std::ofstream(dir / "f", std::ios::binary) << "12345";
  RegularFile file(dir / "f", "a test file");
  CHECK(file.fd() >= 0);
  CHECK(file.size() == 5);
  char buf[8]{};
  CHECK(::read(file.fd(), buf, sizeof buf) == 5);
  const int fd = file.release();
  CHECK(file.fd() == -1);
  CHECK(::close(fd) == 0);  // released: the caller owns (and closes) it
}

TEST_CASE("RegularFile refuses what is not a regular file, without blocking") {
  testutil::TempDir dir;
  CHECK_THROWS_AS(RegularFile(dir / "missing", "a model file"), DataNotFoundError);
  CHECK_THROWS_WITH_AS(RegularFile(dir.path(), "a model file"),
                       doctest::Contains("is a directory, not a model file"), DataFormatError);
  // A FIFO without a writer: a plain open would wait for ever.
  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0600) == 0);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH_AS(RegularFile(dir / "fifo", "an IDX file"), doctest::Contains("is a FIFO"),
                       DataFormatError);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK_THROWS_WITH_AS(RegularFile("/dev/zero", "a model file"),
                       doctest::Contains("is a character device"), DataFormatError);
  CHECK_THROWS_AS(RegularFile(dir / "missing" / "below", "a model file"), DataNotFoundError);
}
